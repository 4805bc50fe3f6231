"""test_scripting.py -- EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL against
redis-server 7.0: the exact reply bytes of scripts covering every type
conversion (both ways, RESP2 and RESP3), every error path of the redis.*
API, the sandbox, shebang flags and functions; then what only strata can
show: one engine batch per script, the writes kept before a runtime error."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, main, test
from redis_compare import RealRedis

# Each case is one command; replies are compared byte for byte.
CONVERSIONS = [
    # Lua -> reply
    ("EVAL", "return 'hello'", 0),
    ("EVAL", "return 42", 0),
    ("EVAL", "return 3.99", 0),
    ("EVAL", "return -3.99", 0),
    ("EVAL", "return 1e20", 0),
    ("EVAL", "return 0/0", 0),
    ("EVAL", "return 1/0", 0),
    ("EVAL", "return true", 0),
    ("EVAL", "return false", 0),
    ("EVAL", "return nil", 0),
    ("EVAL", "return {}", 0),
    ("EVAL", "return {1,2,3,'ciao',{1,2}}", 0),
    ("EVAL", "return {1,2,nil,4}", 0),
    ("EVAL", "return {1,false,3}", 0),
    ("EVAL", "return {1,true,3}", 0),
    ("EVAL", "return {a=1,b=2}", 0),
    ("EVAL", "return {ok='fine'}", 0),
    ("EVAL", "return {ok='two\\r\\nlines'}", 0),
    ("EVAL", "return {err='My Error'}", 0),
    ("EVAL", "return {err='ERR my text'}", 0),
    ("EVAL", "return {err=''}", 0),
    ("EVAL", "return redis.error_reply('My Error')", 0),
    ("EVAL", "return redis.error_reply('-CODE My Error')", 0),
    ("EVAL", "return redis.status_reply('PONG')", 0),
    ("EVAL", "return redis.error_reply(1)", 0),
    ("EVAL", "return redis.status_reply()", 0),
    ("EVAL", "return {double=3.14}", 0),
    ("EVAL", "return {double=1/0}", 0),
    ("EVAL", "return {big_number='123456789012345678901234567890'}", 0),
    ("EVAL", "return {verbatim_string={format='txt', string='hello'}}", 0),
    ("EVAL", "return {map={a=1}}", 0),
    ("EVAL", "return {set={a=true}}", 0),
    ("EVAL", "return {1, {ok='x'}, {err='y'}}", 0),
    ("EVAL", "return function() end", 0),
    ("EVAL", "return KEYS", 2, "k1", "k2", "a1"),
    ("EVAL", "return ARGV", 2, "k1", "k2", "a1", "a2"),
    ("EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", 1, "key", "arg"),
    # reply -> Lua
    ("EVAL", "return redis.call('set', KEYS[1], 'v')", 1, "conv:s"),
    ("EVAL", "return type(redis.call('set', KEYS[1], 'v'))", 1, "conv:s"),
    ("EVAL", "return redis.call('set', KEYS[1], 'v')['ok']", 1, "conv:s"),
    ("EVAL", "return redis.call('get', KEYS[1])", 1, "conv:s"),
    ("EVAL", "return redis.call('get', 'conv:missing')", 0),
    ("EVAL", "return type(redis.call('get', 'conv:missing'))", 0),
    ("EVAL", "return redis.call('incr', KEYS[1])", 1, "conv:n"),
    ("EVAL", "return type(redis.call('incr', KEYS[1]))", 1, "conv:n"),
    ("EVAL", "redis.call('hset', 'conv:h', 'f', 'v', 'g', 'w'); return redis.call('hgetall', 'conv:h')", 0),
    ("EVAL", "return redis.call('hgetall', 'conv:nohash')", 0),
    ("EVAL", "return redis.call('mget', 'conv:s', 'conv:missing', 'conv:n')", 0),
    ("EVAL", "return redis.pcall('incr', 'conv:s')", 0),
    ("EVAL", "return redis.pcall('incr', 'conv:s')['err']", 0),
    ("EVAL", "return type(redis.pcall('incr', 'conv:s'))", 0),
    ("EVAL", "return redis.call('incr', 'conv:s')", 0),
    ("EVAL", "return redis.call('incrbyfloat', 'conv:f', '1.5')", 0),
    ("EVAL", "return redis.call('ping')", 0),
    ("EVAL", "return redis.call('exists', 'conv:s', 'conv:n')", 0),
    ("EVAL", "return redis.call('set', 'conv:x', 1.5)", 0),
    ("EVAL", "return redis.call('get', 'conv:x')", 0),
    ("EVAL", "redis.call('set', 'conv:y', 123456789012); return redis.call('get', 'conv:y')", 0),
    ("EVAL", "redis.call('set', 'conv:z', 0.1); return redis.call('get', 'conv:z')", 0),
    # RESP3 from inside the script
    ("EVAL", "redis.setresp(3); return redis.call('hgetall', 'conv:h')", 0),
    ("EVAL", "redis.setresp(3); local r = redis.call('hgetall', 'conv:h'); return r['map']['f']", 0),
    ("EVAL", "redis.setresp(3); return redis.call('get', 'conv:missing')", 0),
    ("EVAL", "redis.setresp(3); return type(redis.call('get', 'conv:missing'))", 0),
    ("EVAL", "redis.setresp(3); return {true, false}", 0),
    ("EVAL", "redis.setresp(3); return true", 0),
    ("EVAL", "redis.setresp(3); return false", 0),
    ("EVAL", "redis.setresp(3); return redis.call('incrbyfloat', 'conv:f', '1')", 0),
    ("EVAL", "redis.setresp(3); return redis.call('exists', 'conv:s')", 0),
    ("EVAL", "redis.setresp(2); return redis.call('hgetall', 'conv:h')", 0),
    ("EVAL", "redis.setresp(4)", 0),
    ("EVAL", "redis.setresp()", 0),
    # numbers as arguments and results
    ("EVAL", "return tostring(1/3)", 0),
    ("EVAL", "return redis.call('echo', 1/3)", 0),
    ("EVAL", "return redis.call('echo', 100)", 0),
    ("EVAL", "return redis.call('echo', -0.5)", 0),
    ("EVAL", "return redis.call('echo', 1e300)", 0),
]

ERRORS = [
    ("EVAL", "return redis.call('nosuchcommand')", 0),
    ("EVAL", "return redis.pcall('nosuchcommand')", 0),
    ("EVAL", "return redis.call('get')", 0),
    ("EVAL", "return redis.call('get', 'a', 'b')", 0),
    ("EVAL", "return redis.call()", 0),
    ("EVAL", "return redis.pcall()", 0),
    ("EVAL", "return redis.call('get', {})", 0),
    ("EVAL", "return redis.call('get', nil)", 0),
    ("EVAL", "return redis.call('get', true)", 0),
    ("EVAL", "return redis.call('eval', 'return 1', 0)", 0),
    ("EVAL", "return redis.call('multi')", 0),
    ("EVAL", "return redis.call('script', 'load', 'return 1')", 0),
    ("EVAL", "return redis.call('function', 'list')", 0),
    ("EVAL", "return redis.call('fcall', 'x', 0)", 0),
    ("EVAL", "return redis.call('client', 'list')", 0),
    ("EVAL", "return redis.call('config', 'get', 'port')", 0),
    ("EVAL", "return redis.call('shutdown')", 0),
    ("EVAL", "return redis.call('auth', 'x')", 0),
    ("EVAL", "error('custom')", 0),
    ("EVAL", "error({err='ERR table error'})", 0),
    ("EVAL", "error(123)", 0),
    ("EVAL", "error()", 0),
    ("EVAL", "local t = nil; return t.x", 0),
    ("EVAL", "return 1 +", 0),
    ("EVAL", "return", 0),
    ("EVAL", "x = 1", 0),
    ("EVAL", "return undefined_global", 0),
    ("EVAL", "redis.call = function() end", 0),
    ("EVAL", "cjson.encode = 1", 0),
    ("EVAL", "string.rep = 1", 0),
    ("EVAL", "math.x = 1", 0),
    ("EVAL", "_G = {}", 0),
    ("EVAL", "local g = getmetatable(_G); g.__index = {}", 0),
    ("EVAL", "return loadfile", 0),
    ("EVAL", "return dofile", 0),
    ("EVAL", "return print", 0),
    ("EVAL", "return os", 0),
    ("EVAL", "return io", 0),
    ("EVAL", "return package", 0),
    ("EVAL", "return require", 0),
    ("EVAL", "return debug", 0),
    ("EVAL", "return pcall(function() redis.call('nosuchcommand') end)", 0),
    ("EVAL", "return {pcall(function() error({err='X y'}) end)}", 0),
    ("EVAL", "return {pcall(function() error('plain') end)}", 0),
    ("EVAL", "return redis.sha1hex('')", 0),
    ("EVAL", "return redis.sha1hex('Pizza & Mandolino')", 0),
    ("EVAL", "return redis.sha1hex()", 0),
    ("EVAL", "return redis.log(redis.LOG_WARNING, 'from a test')", 0),
    ("EVAL", "return redis.log(redis.LOG_WARNING)", 0),
    ("EVAL", "return redis.log('x', 'y')", 0),
    ("EVAL", "return redis.log(99, 'y')", 0),
    ("EVAL", "return redis.set_repl(redis.REPL_ALL)", 0),
    ("EVAL", "return redis.set_repl(99)", 0),
    ("EVAL", "return redis.set_repl()", 0),
    ("EVAL", "return redis.replicate_commands()", 0),
    ("EVAL", "return redis.breakpoint()", 0),
    ("EVAL", "return redis.debug('x')", 0),
    ("EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0),
    ("EVAL", "return 1", -1),
    ("EVAL", "return 1", 2, "a"),
    ("EVAL", "return 1", "x"),
    ("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0),
    ("EVALSHA", "short", 0),
    ("EVAL", "#!lua\nreturn 1", 0),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'ro:x', 1)", 0),
    ("EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'ro:x')", 0),
    ("EVAL", "#!lua flags=bad-flag\nreturn 1", 0),
    ("EVAL", "#!lua bad=1\nreturn 1", 0),
    ("EVAL", "#!python\nreturn 1", 0),
    ("EVAL", "#!lua", 0),
    ("EVAL_RO", "return redis.call('set', 'ro:x', 1)", 0),
    ("EVAL_RO", "return redis.call('get', 'ro:x')", 0),
    ("EVAL_RO", "#!lua\nreturn 1", 0),
    ("EVAL_RO", "#!lua flags=no-writes\nreturn 2", 0),
    ("EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3].a", 0),
    ("EVAL", "return cjson.encode({a={1,2}, b='x'})", 0),
    ("EVAL", "return cjson.decode('{bad')", 0),
    ("EVAL", "return cmsgpack.unpack(cmsgpack.pack({1,2,3}, 'x', -1099511627776))", 0),
    ("EVAL", "local s = cmsgpack.pack(0.1, -1099511627776, {a=1}, 300, 70000, 'abc', true); local h = '' for i = 1, #s do h = h .. string.format('%02x', string.byte(s, i)) end return h", 0),
    ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 0)}", 0),
    ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 1)}", 0),
    ("EVAL", "return cmsgpack.unpack('\\193')", 0),
    ("EVAL", "return cmsgpack.unpack('\\205')", 0),
    ("EVAL", "local a = {} a[1] = a return cmsgpack.pack(a)", 0),
    ("EVAL", "return {bit.band(0xff, 0x0f), bit.bor(1, 2), bit.bxor(3, 1), bit.lshift(1, 4), bit.tohex(255)}", 0),
    ("EVAL", "return {struct.unpack('>iH', struct.pack('>iH', -5, 65535))}", 0),
    ("EVAL", "return struct.size('>ihd')", 0),
    ("EVAL", "return struct.pack('>s', 'abc')", 0),
    ("EVAL", "return struct.pack('q', 1)", 0),
    ("EVAL", "local s = struct.pack('<!4bhi3I5xdfc3Ts', -1, 300, -70000, 2^33, 1.5, 0.25, 'abc', 7, 'zz') return {s, struct.unpack('<!4bhi3I5xdfc3Ts', s)}", 0),
    ("EVAL", "return {struct.unpack('>i2c0', struct.pack('>i2', 3) .. 'abcdef')}", 0),
    ("EVAL", "return {struct.unpack('>i', 'ab')}", 0),
    ("EVAL", "return struct.unpack('>i', struct.pack('>i', 5), 0)", 0),
    ("EVAL", "return struct.size('s')", 0),
    ("EVAL", "return struct.pack('!3i', 1)", 0),
    ("EVAL", "return struct.pack('i33', 1)", 0),
    ("EVAL", "return struct.pack('>I16', 1)", 0),
    ("EVAL", "local t = {} for i = 1, 20 do t[i] = i * 1000 end local s = cmsgpack.pack(t, {x = {y = {1, 2}}}, string.rep('a', 40), string.rep('b', 300), -200, -40000, 2^40) return {#s, cmsgpack.unpack(s)}", 0),
    ("EVAL", "local t = {} for i = 1, 20 do t['k' .. i] = i end return #cmsgpack.pack(t)", 0),
    ("EVAL", "return cmsgpack.pack()", 0),
    ("EVAL", "return cmsgpack.unpack_one('abc', 10)", 0),
    ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)}", 0),
    ("EVAL", "return cmsgpack.pack({1, 2, nil, 4})", 0),
    ("EVAL", "return cmsgpack.pack({[1] = 1, [3] = 3})", 0),
    ("EVAL", "return cmsgpack.pack(1.5, 3.0e40, -0.0)", 0),
    ("EVAL", "return {math.random(), math.random(10), math.random(5, 6)}", 0),
    ("EVAL", "math.randomseed(42); return {math.random(1000), math.random(1000)}", 0),
    ("EVAL", "return {string.format('%5.2f', 3.14159), string.rep('ab', 3), ('x'):upper()}", 0),
    ("EVAL", "return table.concat({1, 2, 3}, ',')", 0),
    ("EVAL", "local t = {3, 1, 2}; table.sort(t); return t", 0),
    ("EVAL", "return rawget(_G, 'redis') ~= nil", 0),
    ("EVAL", "rawset(_G, 'x', 1)", 0),
    ("EVAL", "setmetatable(_G, {})", 0),
    ("EVAL", "table.insert(redis, 1)", 0),
    ("EVAL", "return loadstring('return 7')()", 0),
    ("EVAL", "return loadstring('x = 1')()", 0),
    ("EVAL", "return loadstring(string.dump(function() return 1 end))()", 0),
    ("EVAL", "return type(loadstring(string.dump(function() return 1 end)))", 0),
    ("EVAL", "local n = 0; return load(function() n = n + 1; if n == 1 then return 'return 5' end end)()", 0),
    ("EVAL", "return {loadstring('return +')}", 0),
    ("EVAL", "local n = 0 for k, v in pairs(redis) do n = n + 1 end return n > 5", 0),
    ("EVAL", "return type(getfenv)", 0),
    ("EVAL", "return type(setfenv)", 0),
    ("EVAL", "return type(newproxy)", 0),
    ("EVAL", "getmetatable('').__index = {}", 0),
    ("EVAL", "getmetatable('').x = 1", 0),
    ("EVAL", "return getmetatable('').__index == string", 0),
    ("EVAL", "return type(__redis__err__handler)", 0),
    ("EVAL", "setmetatable(KEYS, {}); return 1", 0),
    ("EVAL", "return {unpack({1,2,3}, -2147483648, 2147483647)}", 0),
    ("EVAL", "local t = {} for k, v in pairs(_G) do t[#t+1] = k .. ':' .. type(v) end table.sort(t) return t", 0),
    ("EVAL", "local t = {} for k, v in pairs(redis) do t[#t+1] = k end table.sort(t) return t", 0),
    ("EVAL", "local t = {} for k, v in pairs(string) do t[#t+1] = k end table.sort(t) return t", 0),
]

FUNCTIONS = [
    ("FUNCTION", "FLUSH"),
    ("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return {keys, args} end)"),
    ("FCALL", "f1", 1, "k", "a"),
    ("FCALL", "F1", 0),
    ("FCALL_RO", "f1", 0),
    ("FCALL", "nosuch", 0),
    ("FCALL", "f1", "x"),
    ("FCALL", "f1", 5),
    ("FCALL", "f1", -1),
    ("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"),
    ("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\nredis.register_function{function_name='f1', callback=function() return redis.call('set', 'fn:x', 1) end, description='desc', flags={'no-writes', 'allow-stale'}}"),
    ("FCALL", "f1", 0),
    ("FCALL_RO", "f1", 0),
    ("FUNCTION", "LIST"),
    ("FUNCTION", "LIST", "WITHCODE"),
    ("FUNCTION", "LIST", "LIBRARYNAME", "lib*"),
    ("FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"),
    ("FUNCTION", "LIST", "LIBRARYNAME"),
    ("FUNCTION", "LIST", "BAD"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)\nredis.register_function('f2', function() return 2 end)"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nreturn 1"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.call('ping')"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nlocal s = string.rep('a', 2)"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nerror('oops')"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nreturn 1 +"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('bad-name', function() end)"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f3')"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function(1, 2, 3)"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f3'}"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{callback=function() end}"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f3', callback=function() end, flags={'bad'}}"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f3', callback=function() end, other=1}"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f3', callback=1}"),
    ("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f3', function() return redis.setresp end)"),
    ("FUNCTION", "LOAD", "no shebang"),
    ("FUNCTION", "LOAD", "#!lua\nredis.register_function('f3', function() end)"),
    ("FUNCTION", "LOAD", "#!lua name=a name=b\nx"),
    ("FUNCTION", "LOAD", "#!lua name=a foo=b\nx"),
    ("FUNCTION", "LOAD", "#!js name=a\nx"),
    ("FUNCTION", "LOAD", "#!lua name=bad-lib\nx"),
    ("FUNCTION", "LOAD", "#!lua name=a"),
    ("FUNCTION", "LOAD", "BAD", "#!lua name=a\nx"),
    ("FUNCTION", "LOAD"),
    ("FCALL", "f2", 0),
    ("FCALL", "f3", 0),
    ("FUNCTION", "LOAD", "#!lua name=lib3\nlocal function helper() return 'h' end\nredis.register_function('f4', function(keys, args) return helper() .. #keys .. #args end)\nredis.register_function('f5', function(keys, args) return redis.call('incr', keys[1]) end)"),
    ("FCALL", "f4", 2, "a", "b", "c"),
    ("FCALL", "f5", 1, "fn:counter"),
    ("FCALL_RO", "f5", 1, "fn:counter"),
    ("FUNCTION", "LOAD", "#!lua name=lib4\nredis.register_function{function_name='f6', callback=function(keys) return redis.call('incr', keys[1]) end, flags={'no-writes'}}"),
    ("FCALL", "f6", 1, "fn:counter"),
    ("FUNCTION", "LOAD", "#!lua name=lib5\nredis.register_function('f7', function() x = 1 end)\nredis.register_function('f8', function() return undefined end)\nredis.register_function('f9', function() error('in f9') end)"),
    ("FCALL", "f7", 0),
    ("FCALL", "f8", 0),
    ("FCALL", "f9", 0),
    ("FUNCTION", "STATS"),
    ("FUNCTION", "DELETE", "lib5"),
    ("FUNCTION", "DELETE", "lib5"),
    ("FUNCTION", "DELETE"),
    ("FUNCTION", "KILL"),
    ("FUNCTION", "NOSUCH"),
    ("FUNCTION", "FLUSH", "BAD"),
    ("FUNCTION", "FLUSH", "SYNC", "X"),
    ("FUNCTION", "RESTORE", "bad payload"),
    ("FUNCTION", "RESTORE", "x", "BADPOLICY"),
    ("FUNCTION", "FLUSH", "ASYNC"),
    ("FUNCTION", "LIST"),
    ("FUNCTION", "STATS"),
]

SCRIPT_CMDS = [
    ("COMMAND", "GETKEYS", "EVAL", "return 1", 2, "k1", "k2", "a"),
    ("COMMAND", "GETKEYS", "EVAL", "return 1", 0),
    ("COMMAND", "GETKEYS", "EVAL", "return 1", 3, "k1"),
    ("COMMAND", "GETKEYS", "FCALL_RO", "f", 1, "k1", "a"),
    ("MULTI",),
    ("SET", "tx", "1"),
    ("EVAL", "return redis.call('incr', 'tx')", 0),
    ("EVAL", "return redis.call('nosuch')", 0),
    ("EXEC",),
    ("SCRIPT", "FLUSH"),
    ("SCRIPT", "LOAD", "return 'loaded'"),
    ("EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", 0),
    ("EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", 0),
    ("EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", 0),
    ("SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8", "ffffffffffffffffffffffffffffffffffffffff", "B534286061D4B9E4026607613B95C06C06015AE8"),
    ("SCRIPT", "LOAD", "return 1 +"),
    ("SCRIPT", "LOAD", "#!lua flags=bad\nreturn 1"),
    ("SCRIPT", "LOAD"),
    ("SCRIPT", "LOAD", "a", "b"),
    ("SCRIPT", "EXISTS"),
    ("SCRIPT", "KILL"),
    ("SCRIPT", "KILL", "x"),
    ("SCRIPT", "FLUSH", "BAD"),
    ("SCRIPT", "FLUSH", "SYNC"),
    ("SCRIPT", "FLUSH", "ASYNC", "X"),
    ("SCRIPT", "NOSUCH"),
    ("SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"),
    ("EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", 0),
    ("SCRIPT", "HELP"),
    ("FUNCTION", "HELP"),
]


def raw_replies(port, cases, resp):
    c = RawConn(port)
    if resp == 3:
        c.command("HELLO", "3")
    out = []
    for case in cases:
        c.command(*case)
        out.append(c.last_raw)
    c.close()
    return out


def compare(srv, cases, resp=2):
    ref = RealRedis()
    try:
        mine = raw_replies(srv.port, cases, resp)
        theirs = raw_replies(ref.port, cases, resp)
    finally:
        ref.close()
    diffs = ["%r:\n    strata %r\n    redis  %r" % (case, a, b)
             for case, a, b in zip(cases, mine, theirs) if a != b]
    assert not diffs, "%d of %d replies differ (RESP%d):\n%s" % (
        len(diffs), len(cases), resp, "\n".join(diffs[:40]))


def comparison(cases, resp):
    return lambda srv: compare(srv, cases, resp)


# One test per list and protocol, named after what it compares.
for _name, _cases in (("conversions", CONVERSIONS), ("error_paths_and_sandbox", ERRORS),
                      ("functions", FUNCTIONS), ("script_cache_and_multi", SCRIPT_CMDS)):
    for _resp in (2, 3):
        _fn = comparison(_cases, _resp)
        _fn.__name__ = "%s_match_redis_resp%d" % (_name, _resp)
        test(_fn)


@test
def scripts_that_may_write_get_noreplicas_and_noscript_subcommands_are_refused_as_redis(srv):
    """min-replicas-to-write unmet: a script with a shebang and no no-writes
    flag is refused before it runs, a legacy one when it calls a write, a
    read-only one runs; CLUSTER RESET (a noscript subcommand) is refused."""
    ref = RealRedis()
    try:
        script = [("SET", "x", "v"), ("CONFIG", "SET", "min-replicas-to-write", "1"),
                  ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"),
                  ("EVAL", "return redis.call('get','x')", "1", "x"),
                  ("EVAL", "#!lua\nreturn redis.call('get','x')", "1", "x"),
                  ("EVAL", "return redis.call('set','x','1')", "1", "x"),
                  ("CONFIG", "SET", "min-replicas-to-write", "0"),
                  ("EVAL", "return redis.pcall('cluster','reset','hard')", "0")]
        for port in (srv.port, ref.port):
            c = RawConn(port)
            got = [c.command(*cmd) for cmd in script]
            if port == srv.port:
                ours = got
        theirs = got
        norm = [str(x).split(" script:")[0] for x in ours], [str(x).split(" script:")[0] for x in theirs]
        assert norm[0] == norm[1], norm
    finally:
        ref.close()


if __name__ == "__main__":
    main()
