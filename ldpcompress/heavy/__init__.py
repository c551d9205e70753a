"""Heavy hitters over unknown domains: a shuffled prefix tree (docs/guide.md, "Heavy hitters
over unknown domains"; docs/theory.md §2.17)."""
from .accounting import ASSIGNMENTS, RELATION, RoundsPlan, ledger, plan_rounds
from .campaign import Campaign
from .job import HeavyResult, RoundRecord, TreeShape, Word, rank_words, simulate
from .prefix import BYTES, MAX_K, Alphabet
from .rounds import RoundAggregate, RoundList, next_round, survivors

__all__ = ["ASSIGNMENTS", "RELATION", "RoundsPlan", "ledger", "plan_rounds", "Campaign",
           "HeavyResult", "RoundRecord", "TreeShape", "Word", "rank_words", "simulate", "BYTES",
           "MAX_K", "Alphabet", "RoundAggregate", "RoundList", "next_round", "survivors"]
