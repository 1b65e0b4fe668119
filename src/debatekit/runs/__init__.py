"""What the commands compute, below both the command line and the Python API: a run described by
names and values (:mod:`.spec`), the names resolved once (:mod:`.names`) into the objects that play
(:mod:`.prepare`), and what ``solve`` and ``plan`` compute from their options (:mod:`.solve`,
:mod:`.plan`)."""
