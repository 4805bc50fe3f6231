"""test_lists_pops.py -- pops from both ends of a big list, which leave the
chunk they pop from as it is and only move the record's head and count
(ENCODING.md, "Lists"): what LRANGE, LINDEX, LLEN, LPOS, LINSERT and
pushes over the popped positions see, the same after SIGKILL with
appendfsync always, and after a restart."""
import random

from harness import Server, main, test


def check(r, model):
    assert r.llen("l") == len(model)
    assert r.lrange("l", 0, -1) == model
    if model:
        assert r.lindex("l", 0) == model[0]
        assert r.lindex("l", -1) == model[-1]
        assert r.lrange("l", -40, -1) == model[-40:]


@test
def pops_at_both_ends_read_back_exactly_after_sigkill():
    srv = Server(appendfsync="always", list_max_listpack_size=4)  # big from 5 items
    try:
        srv.start()
        r = srv.client()
        rnd = random.Random(7)
        model = [b"i%d" % i for i in range(300)]
        r.rpush("l", *model)
        long_item = b"L" * 300  # out of line: its slot goes with its pop
        for step in range(400):
            op = rnd.randrange(6)
            if op <= 1 and model:
                assert r.lpop("l") == model.pop(0)
            elif op <= 3 and model:
                assert r.rpop("l") == model.pop()
            elif op == 4:
                v = long_item if step % 5 == 0 else b"h%d" % step
                r.lpush("l", v)
                model.insert(0, v)
            else:
                r.rpush("l", b"t%d" % step)
                model.append(b"t%d" % step)
            if step % 50 == 0:
                check(r, model)
        check(r, model)
        srv.kill9()
        srv.start()
        r = srv.client()
        check(r, model)
        # Writes over the chunks pops left: insert, set, trim, counted pops.
        assert r.linsert("l", "BEFORE", model[3], "x") == len(model) + 1
        model.insert(3, b"x")
        r.lset("l", -2, "y")
        model[-2] = b"y"
        assert r.lpop("l", 5) == model[:5]
        del model[:5]
        assert r.rpop("l", 7) == model[-7:][::-1]
        del model[-7:]
        r.ltrim("l", 2, -3)
        model = model[2:-2]
        check(r, model)
        srv.restart()
        r = srv.client()
        check(r, model)
        while model:
            assert r.rpop("l") == model.pop()
        assert r.exists("l") == 0
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
