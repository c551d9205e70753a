"""Every Dask cluster the tests or the library start leaves the dashboard's fixed port alone:
``dashboard_address`` is given, None (no dashboard) or ":0" (a free port), so parallel test
runs and a user's own cluster on :8787 never collide."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cluster_calls():
    for path in [*ROOT.joinpath("tests").glob("*.py"), *ROOT.joinpath("ldpcompress").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                if name == "LocalCluster":
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def test_every_local_cluster_sets_its_dashboard_address():
    calls = list(cluster_calls())
    assert len(calls) >= 4  # the library's and the tests' clusters are all found
    bad = []
    for where, call in calls:
        given = {k.arg: k.value for k in call.keywords}
        value = given.get("dashboard_address")
        if not (isinstance(value, ast.Constant) and value.value in (None, ":0")):
            bad.append(where)
    assert not bad, f"LocalCluster without dashboard_address=None or ':0': {bad}"
