"""Who may run a report set's aggregation (scale/distributed.py): Dask ships pickled functions
and data, so the scheduler's address is refused unless it is encrypted and authenticated
(``tls://``, ``wss://`` with a ``Security``) or on the loopback interface, and a local
cluster's dashboard is served on the loopback interface only, unless the caller allows an
insecure network."""
from __future__ import annotations

import ipaddress

from ..core.regular_files import open_regular
from ..randomizers.estimator import check_flag

__all__ = ["SCHEMES_SECURE", "SCHEMES_PLAIN", "check_scheduler", "tls_security",
           "check_dashboard"]

SCHEMES_SECURE = ("tls", "wss")
SCHEMES_PLAIN = ("tcp", "ws")


def check_scheduler(address, security=None, allow_insecure: bool = False) -> str:
    """Refuse a scheduler address that would send pickled code in the clear to another host:
    ``tls://``/``wss://`` need ``security``; ``tcp://``/``ws://`` (the default scheme) are
    allowed on the loopback interface only, unless ``allow_insecure``."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler must be an address such as tls://host:8786, got {address!r}")
    allow_insecure = check_flag(allow_insecure, "allow_insecure")
    scheme, _, loc = address.rpartition("://")
    scheme = scheme.lower() or "tcp"
    if scheme == "inproc":
        if loc.count("/") != 2:
            raise ValueError(f"scheduler {address}: an inproc:// address is host/pid/number of "
                             "a scheduler running in this same process (tests only); use "
                             "tls://host:port or tcp://127.0.0.1:port")
        return address
    if scheme in SCHEMES_SECURE:
        if security is None:
            raise ValueError(f"scheduler {address}: {scheme}:// needs security="
                             "Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) "
                             "(CLI: --tls-ca-file, --tls-cert, --tls-key)")
        return address
    if scheme not in SCHEMES_PLAIN:
        raise ValueError(f"scheduler {address}: unsupported protocol {scheme!r} (use tls:// or, "
                         "on this machine, tcp://127.0.0.1)")
    if not (_loopback(loc) or allow_insecure):
        raise ValueError(
            f"scheduler {address}: {scheme}:// is neither encrypted nor authenticated, and the "
            "scheduler and workers run pickled code and return the counts, so they must be "
            "trusted: use tls:// with --tls-ca-file/--tls-cert/--tls-key (security=...), or "
            "pass --allow-insecure (allow_insecure=True) on a network you trust")
    return address


def _loopback(loc: str) -> bool:
    host = loc.rsplit(":", 1)[0] if loc.count(":") == 1 or loc.startswith("[") else loc
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_security(ca_file: str, cert: str, key: str | None = None):
    """A Security for ``tls://`` from PEM files (CA, client certificate, its key)."""
    from distributed.security import Security
    for name, path in (("tls-ca-file", ca_file), ("tls-cert", cert), ("tls-key", key)):
        if path is not None:
            try:
                open_regular(path, "a PEM file").close()
            except ValueError as err:  # "<path>: <reason>"
                reason = str(err)[len(str(path)) + 2:] if str(err).startswith(str(path)) \
                    else str(err)
                raise ValueError(f"--{name} {path}: cannot read ({reason})") from None
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


def check_dashboard(address, allow_insecure: bool = False) -> str | None:
    """The address a local cluster serves its dashboard at: None (the default: no dashboard,
    and the scheduler's HTTP endpoints, which list the workers, their directories and memory,
    are off) or "host:port" on the loopback interface (another host only with
    ``allow_insecure``: anyone who reaches it sees the workers)."""
    if address is None:
        return None
    if not isinstance(address, str) or address.count(":") != 1 or \
            not address.rsplit(":", 1)[1].isdigit() or int(address.rsplit(":", 1)[1]) > 65535:
        raise ValueError(f"dashboard must be host:port such as 127.0.0.1:8787, got {address!r}")
    host = address.rsplit(":", 1)[0]
    if not host:
        raise ValueError(f"dashboard {address}: name the interface, e.g. 127.0.0.1"
                         f"{address} (an empty host serves every interface)")
    if not (_loopback(address) or check_flag(allow_insecure, "allow_insecure")):
        raise ValueError(f"dashboard {address}: not a loopback address; the dashboard lists the "
                         "workers, their directories and memory to anyone who reaches it: use "
                         "127.0.0.1, or pass --allow-insecure (allow_insecure=True) on a "
                         "network you trust")
    return address
