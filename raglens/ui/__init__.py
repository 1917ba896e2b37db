"""The Textual explorer: a thin layer over the core that shows every step of naive RAG."""
