"""The accountant's ledger as data: its saved state (accounting/state.py: JSON, files under a
lock, a locked read-modify-write) and dp_accounting both ways (accounting/interop.py), for
:class:`~ldpcompress.accounting.accountant.Accountant`, which inherits these methods."""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from . import interop as I
from . import state as S
from .events import EVENTS

_Ledger = TypeVar("_Ledger", bound="LedgerIO")

__all__ = ["MAX_ROUNDS", "LedgerIO"]

MAX_ROUNDS = 10 ** 9  # composed rounds in all; beyond, integer sizes overflow int64 grids


class LedgerIO:
    """The ledger's state and interop methods of the accountant (which supplies ``events``,
    ``rounds``, ``compose`` and ``pld``)."""

    if TYPE_CHECKING:
        events: list

        @property
        def rounds(self) -> int: ...

        def compose(self, event, times: int = 1): ...

        def pld(self, h: float = 1e-4): ...

    def compose_dp_event(self: _Ledger, dp_event) -> _Ledger:
        """Compose the mechanisms of a dp_accounting ``DpEvent`` tree into this ledger.

        Reads ``GaussianDpEvent`` and ``LaplaceDpEvent`` (as :class:`Gaussian` and
        :class:`Laplace`), ``PoissonSampledDpEvent`` of either (add/remove neighbours, as
        dp_accounting: :class:`PoissonSampledGaussian`, :class:`PoissonSampledLaplace`),
        ``RandomizedResponseDpEvent`` (as :class:`RandomizedResponse`, substitution neighbours),
        ``SelfComposedDpEvent`` and ``ComposedDpEvent`` at any depth, and ``NoOpDpEvent``.
        Equal events are merged (composition is commutative). Needs the extra
        ``[dp-accounting]`` (docs/guide.md §1, "Central mechanisms, DP-SGD and dp_accounting
        in the same ledger").

        Parameters
        ----------
        dp_event : dp_accounting.DpEvent
            The tree to compose (untrusted: every count and parameter is validated).

        Returns
        -------
        Accountant
            This accountant, for chaining.

        Raises
        ------
        TypeError
            ``dp_event`` is not a DpEvent.
        ValueError
            An event this accountant does not model (its place in the tree is named, e.g.
            ``dp_event.events[3].event``), a ``NonPrivateDpEvent``, an invalid parameter, or
            more rounds than the ledger supports.

        Examples
        --------
        >>> import dp_accounting as dp
        >>> from ldpcompress.accounting import Accountant
        >>> tree = dp.SelfComposedDpEvent(dp.GaussianDpEvent(2.0), 10)
        >>> Accountant().compose_dp_event(tree).rounds
        10
        """
        pairs = I.events_from_dp_event(dp_event, EVENTS)
        total = sum(t for _, t in pairs)
        if self.rounds + total > MAX_ROUNDS:
            raise ValueError(f"the DpEvent composes {total} mechanisms; at most {MAX_ROUNDS:.0e} "
                             f"rounds in all are supported ({self.rounds} recorded)")
        for event, times in pairs:
            self.compose(event, times)
        return self

    def to_dp_event(self):
        """The ledger as a dp_accounting DpEvent tree (every event must have one: Gaussian,
        Laplace and their Poisson-sampled forms, RandomizedResponse, PureDP as randomized
        response over 2 buckets); otherwise export :meth:`pld`."""
        return I.to_dp_event(self.events)

    def to_dp_accounting(self, h: float = 1e-4):
        """The ledger's composed privacy loss distribution as a dp_accounting
        ``PrivacyLossDistribution``, to check a value there or to continue composing there.

        The PLD is :meth:`pld` (every event on a round-up grid of step ``h``, Gaussians folded
        into one): pessimistic, so dp_accounting's eps and delta read from it are upper bounds
        for the ledger. Every event with a PLD is exported, shuffled rounds included (which a
        ``DpEvent`` tree, :meth:`to_dp_event`, cannot express). Needs the extra
        ``[dp-accounting]``.

        Parameters
        ----------
        h : float
            The grid step of the privacy losses (default 1e-4): smaller is tighter and larger.

        Returns
        -------
        dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

        Raises
        ------
        ValueError
            An invalid ``h``, or a ledger event with no round-up PLD.

        Examples
        --------
        >>> from ldpcompress.accounting import Accountant, Gaussian
        >>> acct = Accountant().compose(Gaussian(sigma=5.0), times=4)
        >>> pld = acct.to_dp_accounting(1e-3)
        >>> bool(pld.get_epsilon_for_delta(1e-6) >= acct.epsilon(1e-6).lower)
        True
        """
        return I.to_dp_accounting(self.pld(h))

    def to_json(self) -> str:
        """The recorded events and the settings as JSON (accounting/state.py)."""
        return S.dumps(self)

    @classmethod
    def from_json(cls: type[_Ledger], text: str) -> _Ledger:
        """An accountant from the text ``to_json()`` wrote (untrusted: checked as a file is).

        Parameters
        ----------
        text : str
            The JSON state.
        """
        return S.loads(text, cls, EVENTS)

    def save(self, path, lock_timeout: float = S.LOCK_TIMEOUT) -> None:
        """Write the state to a file: through a symlink to its target, under the ledger's
        lock, atomically, keeping the file's mode; a read-only file is refused (ValueError).
        To add rounds to a saved ledger use :meth:`ledger` (a locked read-modify-write).

        Parameters
        ----------
        path : str or path
            The ledger's file.
        lock_timeout : float, default 300
            Seconds to wait for the ledger's lock (then an error).
        """
        S.save(self, path, lock_timeout)

    @classmethod
    def load(cls: type[_Ledger], path) -> _Ledger:
        """Read a state written by save(); the file is checked as untrusted input.

        Parameters
        ----------
        path : str or path
            The ledger's file. (untrusted).
        """
        return S.load(path, cls, EVENTS)

    @classmethod
    def ledger(cls, path, lock_timeout: float = S.LOCK_TIMEOUT, **settings):
        """A saved ledger opened for change, as a context manager: the ledger's lock is held
        for the block, which gets the accountant saved at ``path`` (a new
        ``Accountant(**settings)`` when the file is absent); the ledger is written when the
        block ends normally having added events, and left as it was when it raises.
        Concurrent writers queue (at most ``lock_timeout`` seconds each), so none loses a round.

        >>> with Accountant.ledger(path) as acct:           # doctest: +SKIP
        ...     acct.compose(ShuffledRound(10**5, 2.0), times=7)
        ...     eps = acct.epsilon(1e-6)      # should this raise, nothing is written

        Parameters
        ----------
        path : str or path
            The ledger's file.
        lock_timeout : float, default 300
            Seconds to wait for the ledger's lock (then an error).
        **settings
            Settings of a new ledger (``h``, ``max_size``, ``orders``, ``gap``) when the file
            is absent.
        """
        return S.ledger(path, cls, EVENTS, lock_timeout, **settings)
