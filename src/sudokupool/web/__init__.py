"""The web page that plays the pool: its routes (``site.py``), the print sheet (``printsheet.py``) and the
static assets it serves (``static/``)."""
