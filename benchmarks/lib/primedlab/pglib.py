"""benchmarks/lib/primedlab/pglib.py - a real PostgreSQL for the tests and benchmarks (tests/store/*,
benchmarks/store.py): Debian's postgresql-15 (profiles/packages, group test), a cluster made by
initdb in a temporary directory, run by pg_ctl on a loopback port and a private unix socket (on one
CPU when asked), removed at the end. As root it runs as `nobody` (initdb and pg_ctl refuse root).
The superuser `postgres` connects over the socket (trust); the role `primed` over 127.0.0.1 with a
password (scram-sha-256), as a pod would, given to primed through PGPASSWORD, never in --db.
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

from primedlab import spawn

PASSWORD = "s3cret-pw-never-logged"


def bindir():
    """The newest installed PostgreSQL's bin directory, or None."""
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    return dirs[-1] if dirs and os.access(os.path.join(dirs[-1], "initdb"), os.X_OK) else None


class Postgres:
    """One cluster; use as a context manager. url(): the URI primed gets (no password)."""

    def __init__(self, fsync=True, cpu=None):
        self.bin = bindir()
        if not self.bin:
            raise FileNotFoundError("no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql-15)")
        self.root = tempfile.mkdtemp(prefix="primed-pg-")
        self.data = os.path.join(self.root, "data")
        self.sock = os.path.join(self.root, "sock")
        os.mkdir(self.sock)
        self.port = spawn.free_port()
        self.cpu, self.user = cpu, None
        if os.geteuid() == 0:
            pw = pwd.getpwnam("nobody")
            self.user = (pw.pw_uid, pw.pw_gid)
            os.chmod(self.root, 0o755)
            for d in (self.root, self.sock):
                os.chown(d, *self.user)
        self._run(["initdb", "-D", self.data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
                   "-E", "UTF8", "--no-sync"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = '{self.sock}'\n"
                    f"fsync = {'on' if fsync else 'off'}\nmax_connections = 60\nshared_buffers = 32MB\n")
        self.start()
        self.psql("CREATE ROLE primed LOGIN PASSWORD '%s'" % PASSWORD)
        self.psql("CREATE DATABASE events OWNER primed")

    def _run(self, args, check=True, timeout=60):
        def demote():
            if self.cpu is not None:
                os.sched_setaffinity(0, {self.cpu})  # inherited by the postmaster and its backends
            if self.user:
                os.setgid(self.user[1])
                os.setuid(self.user[0])
        cmd = [os.path.join(self.bin, args[0])] + args[1:]
        return subprocess.run(cmd, preexec_fn=demote, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, check=check, text=True, cwd=self.root)

    def start(self):
        self._run(["pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-w", "-t", "30", "start"])

    def stop(self, mode="fast"):
        self._run(["pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "30", "stop"], check=False)

    def restart(self):
        # -l: the new postmaster must not inherit our stdout pipe (run() would wait on it)
        self._run(["pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-m", "fast", "-w", "-t", "30",
                   "restart"])

    def psql(self, sql, db="postgres"):
        """Runs sql as the superuser over the unix socket; returns its unaligned output."""
        r = self._run(["psql", "-h", self.sock, "-p", str(self.port), "-U", "postgres", "-d", db, "-XAtqc", sql])
        return r.stdout.strip()

    def postmaster_pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def pids(self):
        """The postmaster and its backends."""
        import psutil
        pm = self.postmaster_pid()
        return [pm] + [c.pid for c in psutil.Process(pm).children()]

    def url(self):
        return f"postgresql://primed@127.0.0.1:{self.port}/events"

    def env(self):
        """What primed needs beside --db: the password, from the environment."""
        return {"PGPASSWORD": PASSWORD, "PRIMED_DB": self.url()}

    def close(self):
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def wait_until(cond, timeout, step=0.05):
    """Polls cond() until it is true or timeout seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    v = cond()
    while not v and time.monotonic() < deadline:
        time.sleep(step)
        v = cond()
    return v
