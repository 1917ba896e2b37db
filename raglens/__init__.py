"""raglens: see how naive RAG behaves on a real corpus."""

__version__ = "0.1.0"
