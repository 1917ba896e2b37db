"""Off-topic control questions, in a module without numpy so the app can send them before its first frame.

Varied in topic and in phrasing ("how do I…", "what is…", a few bare keywords, a long one), as the
questions people ask a code or documentation corpus are: the noise band is the spread of their best
scores, so its edge is a percentile of many, not the maximum of a handful.
"""

CONTROL_QUESTIONS = (
    "have you ever been to a five-star resort?",
    "what is a good recipe for banana bread?",
    "who won the football world cup in 1998?",
    "how often should I water an orchid?",
    "what is the capital of Mongolia?",
    "how do I get red wine out of a carpet?",
    "best hiking trails near Lake Garda",
    "why do cats purr?",
    "how long should I boil an egg for a runny yolk?",
    "what should I pack for a week of camping in the rain?",
    "which planet has the most moons?",
    "tips for learning the violin as an adult",
    "how do I teach my dog to stop pulling on the lead?",
    "when did the Western Roman Empire fall?",
    "how many calories are in an avocado?",
    "recommend a novel to read on a long flight",
    "how do I fix a flat bicycle tyre?",
    "what causes the northern lights?",
    "is it safe to swim right after eating?",
    "how should I ask my manager for a raise?",
    "which wine goes with grilled salmon?",
    "growing tomatoes on a balcony",
    "who painted the ceiling of the Sistine Chapel?",
    "how do I get over jet lag quickly?",
    "how does the offside rule work in football?",
    "how tall is Mount Kilimanjaro?",
    "how do I knit a scarf for a beginner?",
    "why is the sky red at sunset?",
    "where can I see flamingos in Europe?",
    "how should I train for my first marathon, and how many weeks does it take?",
    "what are the symptoms of the common cold?",
    "cheap flights to Lisbon in spring",
)
"""Questions no code or documentation corpus should answer (the first is the seed's)."""
