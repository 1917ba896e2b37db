"""The instruments that make naive RAG's failures visible: plain Python and numpy, no UI."""
