"""Heavy hitters over unknown domains: a shuffled prefix tree (docs/guide.md, "Heavy hitters
over unknown domains"; docs/theory.md §2.17)."""
from .accounting import ASSIGNMENTS, RELATION, RoundsPlan, ledger, plan_rounds
from .job import HeavyResult, RoundRecord, TreeShape, Word, simulate
from .prefix import BYTES, Alphabet

__all__ = ["ASSIGNMENTS", "RELATION", "RoundsPlan", "ledger", "plan_rounds", "HeavyResult",
           "RoundRecord", "TreeShape", "Word", "simulate", "BYTES", "Alphabet"]
