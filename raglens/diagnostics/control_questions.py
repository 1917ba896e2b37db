"""Off-topic control questions, in a module without numpy so the app can send them before its first frame."""

CONTROL_QUESTIONS = (
    "have you ever been to a five-star resort?",
    "what is a good recipe for banana bread?",
    "who won the football world cup in 1998?",
    "how often should I water an orchid?",
    "what is the capital of Mongolia?",
)
"""Questions no code or documentation corpus should answer (the first is the seed's)."""
