"""The per-round steps of a real heavy-hitter deployment, as functions (the CLI's
``heavy-hitters plan | candidates | encode | aggregate | words`` call them; docs/guide.md,
"Heavy hitters over unknown domains"):

1. :func:`plan_campaign`: the certified plan (a :class:`~ldpcompress.heavy.campaign.Campaign`);
2. :func:`candidates`: round 1's list from the plan, round j's from round j - 1's aggregate;
3. ``round_sets.write_round_set``: the devices' reports of round j as a report set;
4. ``round_sets.read_round_set``: round j's aggregate from its set(s);
5. :func:`found_words`: the words found, ranked, from every round's aggregate.

``simulate`` runs the same list, encoding and aggregate functions (``rounds``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .accounting import ASSIGNMENTS, per_round_assignments, plan_rounds
from .campaign import Campaign, certified_campaign
from .job import Word, rank_words
from .prefix import Alphabet
from .rounds import RoundAggregate, RoundList, next_round
from .shape import TreeShape

__all__ = ["plan_campaign", "candidates", "found_words"]


def plan_campaign(n: int, eps: float, delta: float, *, rounds: int = 6, step: int = 2,
                  keep: int = 40, alphabet: Alphabet | str | None = None,
                  max_len: int | None = None, oracles: Sequence[str] | None = None,
                  assignments: Sequence[str] = ASSIGNMENTS,
                  eps0_weights: Sequence[float] | None = None) -> Campaign:
    """The certified plan of a campaign of n devices at central (eps, delta): the tree's shape
    checked (``TreeShape.of``) before any accounting, then :func:`plan_rounds` (one common
    eps0), and with ``eps0_weights`` per-round eps0 from the inverse query on the composed
    bound (``Campaign.of``).

    Parameters
    ----------
    n : int
        Devices in the campaign.
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    rounds : int, optional
        Rounds of the tree, in [1, 64] (default 6).
    step : int, optional
        Symbols asked per round, in [1, 8] (default 2).
    keep : int, optional
        Survivors per round, in [1, 10**5] (default 40).
    alphabet : Alphabet, str or None, optional
        The public alphabet, its symbols or "bytes"; None: lower-case a-z and "'".
    max_len : int or None, optional
        The longest word with a code; None: rounds x step - 1.
    oracles : sequence of str or None, optional
        Registered frequency-oracle names to plan with; None: every registered one.
    assignments : sequence of str, optional
        Subset of ("groups", "poisson", "allocation") to certify; default all three.
    eps0_weights : sequence of float or None, optional
        One relative eps0 per round (> 0; groups or poisson only); None: a common eps0.
    """
    if eps0_weights is not None:
        assignments = per_round_assignments(assignments)
    alpha = alphabet if isinstance(alphabet, Alphabet) else (
        Alphabet() if alphabet is None else Alphabet(alphabet))
    shape = TreeShape.of(alpha, step, rounds, keep, max_len)
    plan = plan_rounds(n, shape.rounds, shape.k, eps, delta, oracles=oracles,
                       assignments=assignments)
    return Campaign.of(plan, shape, eps0_weights)


def candidates(campaign: Campaign, aggregate: RoundAggregate | None = None,
               level: float | None = None, threshold: float = 0.0) -> RoundList:
    """Round 1's candidate list (no ``aggregate``), or round j's from round j - 1's aggregate:
    its survivors (top ``keep``; with ``level``, the adaptive threshold: lower confidence
    bound above ``threshold`` devices) extended by every valid block. The campaign is
    certified first (:func:`~ldpcompress.heavy.campaign.certified_campaign`: its bounds
    recomputed from its oracles, a stored ledger that differs refused).

    Parameters
    ----------
    campaign : Campaign
        The campaign's plan.
    aggregate : RoundAggregate or None, optional
        Round j - 1's aggregate (its list must belong to ``campaign``).
    level : float or None, optional
        None: top ``keep``; a level in (0, 1): the adaptive threshold.
    threshold : float, optional
        The adaptive threshold in devices (default 0).
    """
    certified_campaign(campaign)
    if aggregate is None:
        return campaign.first_list()
    if not isinstance(aggregate, RoundAggregate):
        raise TypeError(f"aggregate must be a RoundAggregate, got {type(aggregate).__name__}")
    rl = campaign.check_list(aggregate.list, "the aggregate's candidate list")
    return next_round(rl, aggregate, level, threshold)


def found_words(campaign: Campaign, aggregates: Sequence[RoundAggregate], level: float = 0.95,
                top: int = 20) -> list[Word]:
    """The words found by the campaign, ranked (:func:`rank_words`), from the aggregates of
    every round 1..T (any order; each of this campaign, one per round, and each round's list
    grown from survivors of the previous round's list). The campaign is certified first
    (its stored ledger, which the words are reported with, must be the recomputed one).

    Parameters
    ----------
    campaign : Campaign
        The campaign's plan.
    aggregates : sequence of RoundAggregate
        One aggregate per round.
    level : float, optional
        Confidence level of the intervals (default 0.95).
    top : int, optional
        Words returned (default 20).
    """
    certified_campaign(campaign)
    aggs = sorted(aggregates, key=lambda a: a.index)
    for a in aggs:
        campaign.check_list(a.list, f"the aggregate of round {a.index}")
    T = campaign.shape.rounds
    if [a.index for a in aggs] != list(range(1, T + 1)):
        raise ValueError(f"give one aggregate for each round 1 to {T}, got rounds "
                         f"{[a.index for a in aggs]}")
    shift = campaign.shape.alphabet.base ** campaign.shape.step
    for prev, cur in zip(aggs, aggs[1:]):
        parents = np.unique(cur.candidates // shift)
        if not np.all(np.isin(parents, prev.candidates)):
            raise ValueError(f"round {cur.index}'s list does not grow from round {prev.index}'s "
                             "candidates: the aggregates come from different runs")
    return rank_words(aggs, campaign.shape, campaign.n, level, top)
