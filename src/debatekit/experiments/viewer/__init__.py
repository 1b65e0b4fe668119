"""``debatekit view PATH``: a local web viewer over debate records, run logs and sweep folders
(issue 24). ``data`` reads the sources into rows and pages' contents; ``app`` serves them
(FastAPI and Jinja2, the ``judge`` extra); ``templates`` are its pages."""
