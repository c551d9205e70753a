"""Any finite randomizer from its probability table (docs/theory.md §2.15; docs/guide.md
section 7, "A randomizer from its table").

``TableRandomizer(table)`` takes P[x][y] = Pr[report y | input x] for inputs x in [k] and
outputs y in [m] (ints, floats, ``fractions.Fraction`` or strings such as "1/3"; each row sums
to 1) and implements the whole contract:

* client: exact alias sampling (table_law.realise) with coins from the CSPRNG; the realised
  table (each row rounded onto the grid 1/(m 2^62)) is what every other part uses;
* accounting: ``shuffle_structure()`` is a :class:`~ldpcompress.randomizers.table_law.TableStructure`:
  the privacy blanket w(y) = min_x P[x][y] / gamma and the exact attack of §2.15;
* server: the output counts (int64[m]); the item counts by the unbiased weighted least-squares
  inverse L = (P D P^T)^-1 P D, D = diag(1 / mean_x P[x][y]), when the rows are linearly
  independent; variances and intervals from the multinomial covariance;
* compression (FT21 Alg. 1): reference law the blanket w or the uniform law, whichever gives
  the smaller deletion eps; the ratio is a table look-up;
* storage: one integer column ``report`` (the output index).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import validate as V
from ..core.entropy import Entropy
from ..core.lazy import lazy_module
from ..core.prg import PRG
from .threads import chunks_for
from .contract import (Column, LocalRandomizer, Privacy, SummarySpec, int_dtype,
                       paired, seed_batch, seeds_array)
from .estimator import check_estimates, check_flag, histogram_bytes, integer_reports, normal_quantile
from .registry import register
from .structure import BinaryStructure
from .table_law import (COIN_BITS, EPS0_MIN, TableStructure, check_table, log_up, realise)

__all__ = ["TableRandomizer", "RANK_TOL"]

_seeds = lazy_module("ldpcompress.kernels.seeds")  # Numba: compiled at first use

RANK_TOL = 1e-10  # smallest singular value / largest of D^(1/2)-weighted P: below, no estimator
_COIN = 1 << COIN_BITS


def _draw(thr: np.ndarray, alias: np.ndarray, cols: np.ndarray, coins: np.ndarray) -> np.ndarray:
    """Alias look-up: y = c if u < thr[c] else alias[c] (rows of thr/alias already chosen)."""
    return np.where(coins < thr, cols, alias)


@register
class TableRandomizer(LocalRandomizer):
    """The randomizer whose report is y with probability table[x][y] for input x (replacement
    eps0 = max_y log(max_x P[x][y] / min_x P[x][y]) of the realised table, rounded up).

    Parameters
    ----------
    table : sequence of sequences of float or Fraction
        Row x is the law of the report for input x: k >= 2 rows, each of the same outputs,
        entries in [0, 1] summing to 1 (checked by ``table_law.check_table``, which names the
        row and column at fault); each row is realised on the grid 1/(m 2^62).
    """

    name, privacy = "table", Privacy.REPLACEMENT

    def __init__(self, table):
        exact, canon = check_table(table)
        self.k, self.m = len(exact), len(exact[0])
        self._canon = tuple(tuple(row) for row in canon)
        rows = [realise(row) for row in exact]
        self._structure = TableStructure((("table", self._canon),),
                                         tuple(r.counts for r in rows), self.m << COIN_BITS)
        self.eps = self._structure.eps0
        if not self.eps >= EPS0_MIN:
            raise ValueError(f"the table's rows are identical (eps0 = {self.eps:.3g} < "
                             f"{EPS0_MIN:g}): its reports carry no information")
        self._thr = np.array([r.thr for r in rows], dtype=np.int64)      # (k, m), <= 2^62
        self._alias = np.array([r.alias for r in rows], dtype=np.int64)
        self.table = self._structure.floats()  # the realised P[x][y] as doubles
        self.bits_per_report = max(1, math.ceil(math.log2(self.m)))
        self._init_reference()
        self._init_estimator()

    # -- identity ------------------------------------------------------------------------------
    def params(self) -> dict:
        return {"table": [list(row) for row in self._canon]}

    def describe(self) -> str:
        return f"table({self.k} inputs x {self.m} outputs, eps0={self.eps:.6g})"

    def __repr__(self) -> str:
        return f"TableRandomizer({self.k} x {self.m}, eps0={self.eps:.6g})"

    # -- client --------------------------------------------------------------------------------
    def check_items(self, xs) -> np.ndarray:
        """Inputs as an int64 array, each in [0, k)."""
        return V.items(xs, self.k)

    def check_item(self, x) -> int:
        return V.item(x, self.k, "input")

    def _randomize_many(self, xs, entropy: Entropy) -> np.ndarray:
        """One output per input by the exact alias draw: column uniform in [0, m), coin uniform
        in [0, 2^62), both from ``entropy`` (os.urandom unless told otherwise)."""
        cols = entropy.integers(self.m, xs.size)
        coins = entropy.integers(_COIN, xs.size)
        return _draw(self._thr[xs, cols], self._alias[xs, cols], cols, coins)

    # -- server --------------------------------------------------------------------------------
    def check_reports(self, reports) -> np.ndarray:
        """Reports are output indices: a 1-D integer array with every entry in [0, m)."""
        return integer_reports(reports, self.m, what="output")

    def summary_spec(self) -> SummarySpec:
        return SummarySpec((self.m,), "int64")

    def _summarize(self, ys) -> np.ndarray:
        """How many reports name each output (int64[m])."""
        histogram_bytes(self.m)
        return np.bincount(ys, minlength=self.m).astype(np.int64)

    def _init_estimator(self) -> None:
        p = self.table
        d = 1.0 / p.mean(axis=0)                      # D = diag(1 / mean_x P[x][y]) > 0
        sv = np.linalg.svd(p * np.sqrt(d), compute_uv=False)
        self.rank = int(np.sum(sv > RANK_TOL * sv[0]))
        self._inverse = None
        self._vcoef = None
        if self.rank == self.k:
            gram = (p * d) @ p.T                      # P D P^T, k x k, positive definite
            self._inverse = np.linalg.solve(gram, p * d)   # L = (P D P^T)^-1 P D, L P^T = I
            # v[j, x] = Var(L[j, Y] | input x) = sum_y L[j, y]^2 P[x][y] - [j = x]
            self._vcoef = np.maximum((self._inverse ** 2) @ p.T - np.eye(self.k), 0.0)

    def _estimator(self) -> np.ndarray:
        if self._inverse is None:
            raise ValueError(f"{self.describe()}: its rows are linearly dependent (rank "
                             f"{self.rank} < k = {self.k}), so item counts cannot be estimated "
                             "from its reports (it still has accounting and compression)")
        return self._inverse

    def _variances(self) -> np.ndarray:
        self._estimator()  # refuses a table without an estimator
        assert self._vcoef is not None
        return self._vcoef

    def estimate_from_summary(self, summary, n: int) -> np.ndarray:
        """Unbiased item counts L c from the output counts c of n reports (c sums to n)."""
        n = V.integer_at_least(n, "n", 0)
        c = np.asarray(summary)
        if c.shape != (self.m,) or c.dtype.kind not in "iu":
            raise ValueError(f"a table summary is int64[{self.m}] output counts, got "
                             f"{c.dtype}{list(c.shape)}")
        if c.size and (c.min() < 0 or c.max() > n or int(c.sum()) != n):
            raise ValueError(f"output counts must be in [0, n] and sum to n = {n}, got sum "
                             f"{int(c.sum())}, values in [{c.min()}, {c.max()}]")
        return self._estimator() @ c.astype(float)

    def variance(self, counts) -> np.ndarray:
        """Variance of each estimated item count when the true item counts are ``counts``
        (length k, >= 0): sum_x counts[x] (sum_y L[j, y]^2 P[x][y] - [j = x]).

        Parameters
        ----------
        counts : array of float
            The true count of each item (length k, >= 0).
        """
        vcoef = self._variances()
        c = check_estimates(counts, "counts", self.k)
        if np.any(c < 0):
            raise ValueError("counts must be >= 0")
        return vcoef @ c

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """est +- z sqrt(variance), z the two-sided normal quantile of ``level``: at the plug-in
        counts (est clipped at 0, rescaled to sum n), or with ``conservative`` the worst case
        over all counts summing to n (the variance is linear: n max_x v[j, x])."""
        est = check_estimates(est, "est", self.k)
        n = V.integer_at_least(n, "n", 0)
        z = normal_quantile(level)
        vcoef = self._variances()
        if check_flag(conservative, "conservative"):
            var = n * vcoef.max(axis=1)
        else:
            c = np.maximum(est, 0.0)
            c = c * (n / c.sum()) if c.sum() > 0 else np.full(self.k, n / self.k)
            var = vcoef @ c
        half = z * np.sqrt(np.maximum(var, 0.0))
        return est - half, est + half

    # -- storage -------------------------------------------------------------------------------
    def report_columns(self) -> tuple[Column, ...]:
        return (Column("report", int_dtype(self.m)),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        return {"report": reports.astype(self.report_columns()[0].dtype)}

    def _from_columns(self, columns) -> np.ndarray:
        return columns["report"]

    # -- compression (FT21 Alg. 1) ---------------------------------------------------------------
    def _init_reference(self) -> None:
        """The reference law of smaller deletion eps: the blanket w (realised on the alias
        grid) or the uniform law; ratios P[x][y] / rho(y) exactly, then to doubles."""
        st = self._structure
        mins = st.mins()
        gamma = sum(mins)
        w = realise([v / gamma for v in mins])
        # uniform first: on a tie (w uniform itself, as for k-RR) its sampler needs no coin
        cands = {"uniform": [1 << COIN_BITS] * self.m, "blanket": list(w.counts)}
        best: tuple = ("", math.inf, [])
        for name, ref in cands.items():
            ratios = [[st.entry(x, y) * st.denominator / ref[y] for y in range(self.m)]
                      for x in range(self.k)]
            top = max(max(max(r), 1 / min(r)) for r in ratios)
            eps_d = log_up(top)
            if eps_d < best[1]:
                best = (name, eps_d, ratios)
        self.reference, self.deletion_eps, ratios = best
        self._ratio = np.array([[float(v) for v in row] for row in ratios])
        self._ref_thr = np.array(w.thr, dtype=np.int64)
        self._ref_alias = np.array(w.alias, dtype=np.int64)

    def _moduli(self) -> np.ndarray:
        """The reference sampler's draws from a seed's stream: a column in [0, m), and for the
        blanket law the alias coin in [0, 2^62)."""
        return np.array([self.m] + ([_COIN] if self.reference == "blanket" else []),
                        dtype=np.int64)

    def sample(self, prg: PRG) -> int:
        """One output of the reference law from the PRG stream (docs/theory.md §5.1 draws)."""
        c = int(prg.integers(self.m, 1)[0])
        if self.reference == "uniform":
            return c
        u = int(prg.integers(_COIN, 1)[0])
        return c if u < self._ref_thr[c] else int(self._ref_alias[c])

    def ratio(self, x, y) -> float:
        """R(x)(y) / rho(y): a look-up in the realised table."""
        x = self.check_item(x)
        y = self.check_reports(np.asarray([y]))[0]
        return float(self._ratio[x, y])

    def ratio_bounds(self):
        return float(self._ratio.min()), float(self._ratio.max())

    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The outputs the seeds stand for (the reference sampler on each stream): int64 (n,)."""
        seeds = seeds_array(seeds)
        draws = _seeds.bounded_draws(seeds, self._moduli(), chunks_for(len(seeds)))
        cols = draws[:, 0]
        if self.reference == "uniform":
            return cols
        return _draw(self._ref_thr[cols], self._ref_alias[cols], cols, draws[:, 1])

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        return self._ratio[xs, self.decode_seeds(seeds)]

    # -- accounting ----------------------------------------------------------------------------
    @property
    def table_structure(self) -> TableStructure:
        """The realised table as exact rationals (what the table's own bounds read)."""
        return self._structure

    def shuffle_structure(self) -> TableStructure | BinaryStructure:
        """The realised table (docs/theory.md §2.15): its blanket and attack are computed from it.
        A 2 x 2 table is a binary randomizer: it states its two realised probabilities
        Pr[1 | 1] and Pr[1 | 0] instead, whose shuffled count is accounted exactly (§2.14)."""
        if self.k == 2 and self.m == 2:
            st = self._structure
            return BinaryStructure("table", st.params, st.entry(1, 1), st.entry(0, 1))
        return self._structure
