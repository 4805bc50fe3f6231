"""npm_packages.py -- installs the npm packages a test drives (node clients
of strata) once under $BUILD/npm/..., and reuses them while the test's
package.json (the versions pinned) is unchanged."""
import fcntl
import os
import shutil
import subprocess


def npm_install(package_json, prefix, probe, timeout=300):
    """Installs what package_json names into prefix unless prefix already
    holds that package.json and node_modules/<probe>. Returns None when the
    packages are there, else why they are not (for a SKIP line)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return "node or npm is not installed"
    os.makedirs(prefix, exist_ok=True)
    # tests/run.sh runs tests side by side: one install into prefix at a time.
    with open(os.path.join(prefix, ".install-lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(package_json, prefix, probe, npm, timeout)


def _install(package_json, prefix, probe, npm, timeout):
    want = open(package_json).read()
    stamp = os.path.join(prefix, "package.json")
    have = open(stamp).read() if os.path.exists(stamp) else ""
    if have == want and os.path.isdir(os.path.join(prefix, "node_modules", probe)):
        return None
    with open(stamp, "w") as f:
        f.write(want)
    try:
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", prefix],
                           cwd=prefix, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.remove(stamp)
        return "npm install timed out (is the npm registry reachable?)"
    if p.returncode != 0:
        os.remove(stamp)
        return "npm install failed (is the npm registry reachable?): " + p.stderr.strip()[-200:]
    return None
