#!/usr/bin/python3
"""Job frameworks that keep their queues in lists, run unchanged against the server.

- RQ (Debian's python3-rq): 1,000 jobs enqueued, one real `rq worker --burst` process (SimpleWorker: no fork per job) runs them
  all; every job's result is stored and every job is finished.
- Celery (Debian's python3-celery, kombu's Redis transport) with the server as broker and
  result backend: a real worker process runs 1,000 tasks and every result comes back.
- Durability: with appendfsync always, jobs RQ acknowledged as enqueued and tasks Celery
  acknowledged as sent survive a kill -9 of the server, and a worker started after the restart
  runs every one of them (Celery's results come back from the restarted server).

Each worker is a separate process with a deadline; every loop is bounded.

Run: /usr/bin/python3 test_job_queues.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, run_cases  # noqa: E402

PYTHON = "/usr/bin/python3"
JOBS = 1000
WORKER_DEADLINE_S = 180


def tasks_module(directory):
    """Writes the module both frameworks import the job functions from."""
    path = os.path.join(directory, "shop_tasks.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent("""\
            import os

            def ship(order_id):
                return "shipped-%d" % order_id

            def make_celery(url):
                from celery import Celery
                app = Celery("shop", broker=url, backend=url)
                app.conf.update(task_acks_late=True, worker_prefetch_multiplier=16,
                                broker_connection_retry_on_startup=True,
                                result_expires=3600)

                @app.task(name="shop.ship")
                def ship_task(order_id):
                    return ship(order_id)

                return app

            app = make_celery(os.environ.get("SHOP_BROKER", "redis://127.0.0.1:6379/0"))
            """))
    return directory


def run_worker(cmd, env, deadline_s=WORKER_DEADLINE_S):
    """Runs a worker process to its end (or kills it at the deadline); returns its output."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        raise AssertionError("worker still running after %d s:\n%s" % (deadline_s, out[-3000:]))
    return p.returncode, out.decode(errors="replace")


def rq_env(directory):
    env = dict(os.environ)
    env["PYTHONPATH"] = directory
    return env


def enqueue_rq(port, count, prefix=0):
    from redis import Redis
    from rq import Queue
    import shop_tasks
    q = Queue("orders", connection=Redis(host="127.0.0.1", port=port))
    return [q.enqueue(shop_tasks.ship, prefix + i).id for i in range(count)]


def check_rq_done(port, ids, prefix=0):
    from redis import Redis
    from rq.job import Job
    conn = Redis(host="127.0.0.1", port=port)
    jobs = Job.fetch_many(ids, connection=conn)
    missing = [i for i, j in zip(ids, jobs) if j is None]
    assert not missing, "%d jobs vanished" % len(missing)
    results = [j.result for j in jobs]
    assert results == ["shipped-%d" % (prefix + i) for i in range(len(ids))], results[:5]
    assert all(j.get_status() == "finished" for j in jobs)


@case
def rq_worker_runs_every_job(t, srv):
    """1,000 RQ jobs, one real `rq worker --burst`: every job finished with its result."""
    with tempfile.TemporaryDirectory() as d:
        tasks_module(d)
        sys.path.insert(0, d)
        try:
            ids = enqueue_rq(srv.port, JOBS)
            code, out = run_worker([PYTHON, "-m", "rq.cli", "worker", "--burst", "--worker-class", "rq.worker.SimpleWorker", "--url",
                                    "redis://127.0.0.1:%d" % srv.port, "orders"], rq_env(d))
            assert code == 0, out[-3000:]
            check_rq_done(srv.port, ids)
        finally:
            sys.path.remove(d)


def celery_env(directory, port):
    env = rq_env(directory)
    env["SHOP_BROKER"] = "redis://127.0.0.1:%d/0" % port
    return env


class CeleryWorker:
    """A real `celery worker` process (thread pool of 8) for the tasks module in `directory`."""

    def __init__(self, directory, env):
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "shop_tasks", "worker", "--pool", "threads",
             "--concurrency", "8", "--loglevel", "WARNING", "--without-gossip",
             "--without-mingle", "--without-heartbeat"],
            env=env, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def celery_client(directory, env, body):
    """Runs `body` in a separate interpreter with the tasks module imported; returns its
    exit code and output."""
    code = "import sys, time\nsys.path.insert(0, %r)\nimport shop_tasks\n" % directory + body
    return run_worker([PYTHON, "-c", code], env)


def celery_send(count, first):
    """Client code: sends `count` tasks from order `first` and prints their ids, one a line,
    each only once send_task has returned (the broker acknowledged the push)."""
    return textwrap.dedent("""\
        for i in range(%d, %d):
            print("id", shop_tasks.app.send_task("shop.ship", args=(i,)).id, flush=True)
        """) % (first, first + count)


def celery_collect(ids, first):
    """Client code: polls every task's stored result (GET of its meta key) and checks it.
    Polling, not AsyncResult.get: a result object made after the worker may already have run
    the task can subscribe to its channel just after the result was published, and wait for
    a message that never comes (a race in the client, on any server)."""
    return textwrap.dedent("""\
        ids = %r
        deadline = time.monotonic() + %d
        got = []
        for i in ids:
            r = shop_tasks.app.AsyncResult(i)
            while not r.ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            got.append(r.result)
        assert got == ["shipped-%%d" %% (%d + n) for n in range(len(ids))], got[:5]
        print("celery ok", len(got))
        """) % (ids, WORKER_DEADLINE_S, first)


@case
def celery_worker_runs_every_task(t, srv):
    """Celery with the server as broker and backend: 1,000 tasks, every result back."""
    with tempfile.TemporaryDirectory() as d:
        tasks_module(d)
        env = celery_env(d, srv.port)
        with CeleryWorker(d, env):
            # send_task subscribes to each result's channel as it sends, so get() cannot miss it.
            rc, out = celery_client(d, env, textwrap.dedent("""\
                results = [shop_tasks.app.send_task("shop.ship", args=(i,)) for i in range(%d)]
                deadline = time.monotonic() + %d
                got = [r.get(timeout=max(1, deadline - time.monotonic())) for r in results]
                assert got == ["shipped-%%d" %% i for i in range(%d)], got[:5]
                print("celery ok", len(got))
                """) % (JOBS, WORKER_DEADLINE_S, JOBS))
            assert rc == 0 and "celery ok %d" % JOBS in out, out[-3000:]


@case
def celery_tasks_survive_kill9(t, srv):
    """appendfsync always: tasks Celery acknowledged as sent run after a kill -9 of the
    broker and a restart, and their results come back from the restarted server."""
    data = tempfile.mkdtemp(prefix="hotkv-celery-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", data]
    first = 7000
    with tempfile.TemporaryDirectory() as d:
        tasks_module(d)
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            rc, out = celery_client(d, celery_env(d, s.port), celery_send(300, first))
            assert rc == 0, out[-3000:]
            ids = [line.split()[1] for line in out.splitlines() if line.startswith("id ")]
            assert len(ids) == 300, out[-3000:]
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            env = celery_env(d, s2.port)
            with CeleryWorker(d, env):
                rc, out = celery_client(d, env, celery_collect(ids, first))
                assert rc == 0 and "celery ok 300" in out, out[-3000:]
        finally:
            s2.stop()


@case
def rq_jobs_survive_kill9(t, srv):
    """appendfsync always: jobs acknowledged as enqueued run after a kill -9 and a restart."""
    data = tempfile.mkdtemp(prefix="hotkv-jobs-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", data]
    with tempfile.TemporaryDirectory() as d:
        tasks_module(d)
        sys.path.insert(0, d)
        try:
            s = t.server(extra_args=args, expect_exit=None).start()
            try:
                ids = enqueue_rq(s.port, 300, prefix=5000)
                os.kill(s.pid(), signal.SIGKILL)
                s.wait(timeout=10)
            finally:
                s.cleanup()
            s2 = t.server(extra_args=args).start()
            try:
                code, out = run_worker([PYTHON, "-m", "rq.cli", "worker", "--burst", "--worker-class", "rq.worker.SimpleWorker", "--url",
                                        "redis://127.0.0.1:%d" % s2.port, "orders"], rq_env(d))
                assert code == 0, out[-3000:]
                check_rq_done(s2.port, ids, prefix=5000)
            finally:
                s2.stop()
        finally:
            sys.path.remove(d)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
