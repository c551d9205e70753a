"""core/chunks.py: the one chunk loop covers range(n) once, in order, in slices of <= step."""
import pytest

from ldpcompress.core.chunks import spans


@pytest.mark.parametrize("n, step", [(0, 3), (1, 1), (7, 3), (9, 3), (5, 10), (1000, 7)])
def test_spans_cover_every_row_once_in_order(n, step):
    parts = list(spans(n, step))
    rows = [i for s in parts for i in range(s.start, s.stop)]
    assert rows == list(range(n))
    assert all(0 < s.stop - s.start <= step for s in parts)
    assert len(parts) == -(-n // step)  # ceil(n / step) slices


def test_a_step_below_one_is_refused():
    with pytest.raises(ValueError, match="step must be >= 1"):
        list(spans(10, 0))
