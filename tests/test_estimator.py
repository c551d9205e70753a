"""The estimators' shared statistics (randomizers/estimator.py): the normal quantile behind every
confidence interval, against mpmath, up to levels within one ulp of 1."""
import mpmath as mp


def test_level_near_one():
    from ldpcompress.randomizers.estimator import normal_quantile
    with mp.workdps(40):
        for level in (0.95, 0.9999999999999999, 0.5):
            assert abs(normal_quantile(level) - float(mp.sqrt(2) * mp.erfinv(level))) < 1e-12
    assert normal_quantile(0.9999999999999999) > 8.29
