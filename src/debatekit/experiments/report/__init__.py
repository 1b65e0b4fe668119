"""Reports: what a log folder, one run folder or a sweep folder holds, as normalised rows, drawn as
the plots researchers ask for and written as one self-contained ``report.html``.

One module per job: :mod:`.rows` (the kinds of row), :mod:`.read` (every source into rows),
:mod:`.series` (exactly what each plot draws), :mod:`.draw` (matplotlib) and :mod:`.html` (the
plots drawn and ``report.html`` written). ``debatekit report`` and the demo share them."""
