"""kernels/records.py: the named argument records of the kernels are built by keyword, each
field coerced to its declared type, and refused loudly when missing, unknown or out of type."""
import numpy as np
import pytest

from ldpcompress.kernels import participation as K
from ldpcompress.kernels import participation_attack as KA
from ldpcompress.kernels.records import record


def test_kernel_records_fail_loudly():
    """The sampled kernels take named records: a boolean field takes only a boolean, an integer
    field only an integral value, and a missing field is refused before any kernel runs."""
    good = dict(n=30.0, g=0.25, gc=0.75, so=0.2, soc=0.8, u1=0.7, u1c=0.3, u2=0, u2c=1)
    law = record(KA.PoissonCountLaw, **good, remove=np.bool_(True))
    assert law.remove is True and type(law.n) is int and type(law.u2) is float
    for bad in (0.5, 1, "yes", None):
        with pytest.raises(ValueError, match="PoissonCountLaw.remove must be True or False"):
            record(KA.PoissonCountLaw, **good, remove=bad)
    with pytest.raises(TypeError, match=r"missing \['q0_power'\]"):
        record(K.RemoveCloneLaw, x1=-1.0, s=0.2, sc=0.8, wt=0.3, wtc=0.7, q=0.5)
    with pytest.raises(ValueError, match="RemoveBlanketLaw.q0_power must be an integer"):
        record(K.RemoveBlanketLaw, x1=0.0, s=0.2, sc=0.8, wt=0.3, wtc=0.7, a=0.1, ac=0.9,
               gce=0.5, ce=1.0, q0_power=0.5)


def test_a_record_compiles_one_signature_whatever_the_callers_types():
    """Fields given as ints or floats give the same record type: the kernel compiles once (a
    positional int where a float was expected used to add a second signature)."""
    ns, ws, x0s = np.array([5], dtype=np.int64), np.ones(1), np.array([6.0])
    a = record(K.RemoveCloneLaw, x1=-1, s=0.25, sc=0.75, wt=0.5, wtc=0.5, q=1, q0_power=0)
    b = record(K.RemoveCloneLaw, x1=-1.0, s=0.25, sc=0.75, wt=0.5, wtc=0.5, q=1.0,
               q0_power=0.0)
    assert a == b and [type(v) for v in a] == [type(v) for v in b]
    got = [K.remove_clone_delta(ns, ws, x0s, law, 0.5, 1e-12, 0.0) for law in (a, b)]
    assert got[0] == got[1] and 0.0 < got[0] <= 1.0
    assert len(K.remove_clone_delta.signatures) == 1
