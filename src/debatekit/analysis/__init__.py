"""Analysis over protocol game trees: Monte Carlo play and exact search."""
