"""test_ft_node.py -- redis-om for Node and node-redis's @redis/search against
strata's FT.* (tests/integration/ft_node/ft_clients.mjs prints the PASS/FAIL
lines).

The npm packages (versions pinned in ft_node/package.json) are installed once
under $BUILD/npm and reused; when node is missing or the npm registry cannot
be reached the test prints a SKIP line saying so and passes nothing.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npm_packages import npm_install  # noqa: E402
from harness import ROOT, Server  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ft_node")
NPM_DIR = os.path.join(ROOT, os.environ.get("BUILD", "build"), "npm")


def install():
    """Returns None when the packages are there, else why they are not."""
    return npm_install(os.path.join(HERE, "package.json"), NPM_DIR, "redis-om", timeout=180)


def main():
    why = install()
    if why:
        print("SKIP ft_node_clients: %s" % why)
        return 0
    script = os.path.join(NPM_DIR, "ft_clients.mjs")
    shutil.copy(os.path.join(HERE, "ft_clients.mjs"), script)  # resolves its imports in NPM_DIR
    srv = Server().start()
    try:
        p = subprocess.run(["node", script, str(srv.port)], capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.stdout.write(p.stderr[-2000:])
            if "FAIL " not in p.stdout:
                print("FAIL ft_node_clients: node exited with %d" % p.returncode)
            return 1
        return 0
    finally:
        srv.cleanup()


if __name__ == "__main__":
    sys.exit(main())
