// Lua scripts of the Redis queue store: each keeps one queue consistent without a round trip
// per step. Every key a script touches comes in KEYS (none is built in Lua), and all of them are
// one realm's (keys.ts), so each call runs in one slot of a Redis Cluster. A script that finds
// queue ids in a set reads what it needs of them from the realm's `qinfo` hash and its sorted
// sets, keys it declared, and never their own hashes.
import type { Result } from "ioredis";
import type { RedisClient } from "./connection";

declare module "ioredis" {
  interface RedisCommander<Context> {
    /**
     * Appends to many queues of one realm in one call, each queue at most once per source id.
     * KEYS: the realm's poll and deadline sets and its info hash, then per queue its hash, events
     * and sources. ARGV: source id, now, dedupe window, max events, then the distinct events' JSON
     * (their count first), then per queue (in KEYS order) its id, its event count and each
     * event's 1-based index among them. Per queue, two numbers: the number of events added, -1 if
     * the source id was already applied, 0 if the queue is gone, -2 if the events took it past
     * maxEvents (0: no limit) and it was deleted; then the first added event's id (-1 if none).
     */
    busQueueAppendMany(numKeys: number, ...keysAndArgs: (string | number)[]): Result<number[], Context>;
    /**
     * The user's least recently polled queues past `limit`, never `keepId` (the caller deletes
     * them); ids of queues already gone are dropped from the user's set.
     */
    busQueueEvict(
      userQueuesKey: string, infoKey: string, pollKey: string, deadlineKey: string,
      limit: number, keepId: string,
    ): Result<string[], Context>;
    /** Remaining events as JSON, or null if the queue is gone. */
    /** Given an owner ('' for any), null also if the queue is another user's. */
    busQueueRead(
      queueKey: string, eventsKey: string, pollKey: string, deadlineKey: string,
      lastEventId: number, nowMs: number, queueId: string, ownerId: number | "",
    ): Result<string[] | null, Context>;
    /** 1 if deleted; 0 if missing or (when expiring, given the time) not idle for its timeout. */
    busQueueDelete(
      queueKey: string, eventsKey: string, sourcesKey: string, infoKey: string, pollKey: string, deadlineKey: string,
      userQueuesKey: string, allPublicStreamsKey: string,
      queueId: string, nowMs: number | "", defaultIdleMs: number | "",
    ): Result<number, Context>;
    /**
     * Every live queue in the given sets of one realm (KEYS: its info hash, poll and deadline
     * sets, then the sets): the distinct settings texts, and per queue its id, the 1-based index
     * of its settings, then allPublicStreams, since, lastPollMs and idleTimeoutMs ('' when unset).
     */
    busQueuesOfSets(numKeys: number, ...keys: string[]): Result<[string[], (string | number)[]], Context>;
  }
}

/**
 * What the realm's `qinfo` hash holds of a queue: `<allPublicStreams 0|1>|<since>|<idle timeout
 * ms or ''>|<settings JSON>` (the settings last, since they may contain `|`). Set once, when the
 * queue is made.
 */
export function packQueueInfo(allPublicStreams: boolean, since: string, idleTimeoutMs: number | undefined, settings: string): string {
  return `${allPublicStreams ? "1" : "0"}|${since}|${idleTimeoutMs ?? ""}|${settings}`;
}

/** packQueueInfo's fields back: [allPublicStreams, since, idleTimeoutMs ('' if none), settings]. */
export function unpackQueueInfo(info: string): [string, string, string, string] {
  const a = info.indexOf("|");
  const b = info.indexOf("|", a + 1);
  const c = info.indexOf("|", b + 1);
  return [info.slice(0, a), info.slice(a + 1, b), info.slice(b + 1, c), info.slice(c + 1)];
}

// The same in Lua, and a queue's last poll: its score by poll, or its deadline less its timeout.
const QUEUE_INFO = `
local function unpackInfo(info)
  local a = string.find(info, '|', 1, true)
  local b = string.find(info, '|', a + 1, true)
  local c = string.find(info, '|', b + 1, true)
  return string.sub(info, 1, a - 1), string.sub(info, a + 1, b - 1), string.sub(info, b + 1, c - 1), string.sub(info, c + 1)
end
local function lastPoll(id, timeout, pollKey, deadlineKey)
  if timeout == '' then return tonumber(redis.call('ZSCORE', pollKey, id) or 0) end
  return tonumber(redis.call('ZSCORE', deadlineKey, id) or 0) - tonumber(timeout)
end
`;

// Deletes a queue's keys and its entries in the realm's hash and sorted sets. Its entries in the
// user's and the all_public_streams sets go when a script next reads those sets (collect, evict)
// unless the caller removes them too.
const DELETE_QUEUE = `
local function deleteQueue(queueKey, eventsKey, sourcesKey, infoKey, pollKey, deadlineKey, queueId)
  redis.call('DEL', queueKey, eventsKey, sourcesKey)
  redis.call('HDEL', infoKey, queueId)
  redis.call('ZREM', pollKey, queueId)
  redis.call('ZREM', deadlineKey, queueId)
end
`;

// Appends events to many queues at once, each distinct event's JSON sent once (a message to a
// stream of 1,000 was 1,000 calls carrying 1.5 MB of the same text). Each event arrives as JSON
// without `id`; the id is spliced in as the last member rather than going through cjson, which
// would rewrite numbers and turn empty arrays into objects. A queue its client lets grow past the
// limit is dropped whole: its next poll learns BAD_EVENT_QUEUE_ID and registers again, which real
// clients do, rather than reading a queue with a hole in it.
const APPEND_MANY = `${DELETE_QUEUE}
local sourceId = ARGV[1]
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local maxEvents = tonumber(ARGV[4])
local variants = tonumber(ARGV[5])
local results = {}
local i = 6 + variants
local k = 4
while i <= #ARGV do
  local queueId = ARGV[i]
  local n = tonumber(ARGV[i + 1])
  local queueKey = KEYS[k]
  local eventsKey = KEYS[k + 1]
  local sourcesKey = KEYS[k + 2]
  local result = n
  local first = -1
  if redis.call('EXISTS', queueKey) == 0 then
    result = 0
  elseif redis.call('ZSCORE', sourcesKey, sourceId) then
    result = -1
  elseif maxEvents > 0 and redis.call('ZCARD', eventsKey) + n > maxEvents then
    deleteQueue(queueKey, eventsKey, sourcesKey, KEYS[3], KEYS[1], KEYS[2], queueId)
    result = -2
  else
    redis.call('ZREMRANGEBYSCORE', sourcesKey, '-inf', now - window)
    redis.call('ZADD', sourcesKey, now, sourceId)
    first = redis.call('HINCRBY', queueKey, 'nextId', n) - n
    local args = {}
    for j = 1, n do
      local id = first + j - 1
      local json = ARGV[5 + tonumber(ARGV[i + 1 + j])]
      args[#args + 1] = id
      args[#args + 1] = string.sub(json, 1, -2) .. ',"id":' .. string.format('%d', id) .. '}'
      if #args >= 1000 or j == n then
        redis.call('ZADD', eventsKey, unpack(args))
        args = {}
      end
    end
  end
  results[#results + 1] = result
  results[#results + 1] = first
  i = i + 2 + n
  k = k + 3
end
return results
`;

// A user's queues past the limit, least recently polled first (KEYS: the user's set, the realm's
// info hash, poll and deadline sets; ARGV: limit, the id to keep).
const EVICT = `${QUEUE_INFO}
local limit = tonumber(ARGV[1])
local live = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local info = redis.call('HGET', KEYS[2], id)
  if not info then
    redis.call('SREM', KEYS[1], id)
  elseif id ~= ARGV[2] then
    local _, _, timeout = unpackInfo(info)
    live[#live + 1] = { id = id, polled = lastPoll(id, timeout, KEYS[3], KEYS[4]) }
  end
end
local evicted = {}
local excess = #live + 1 - limit
if excess <= 0 then return evicted end
table.sort(live, function(a, b) return a.polled < b.polled end)
for i = 1, excess do evicted[#evicted + 1] = live[i].id end
return evicted
`;

// A queue with its own idle timeout is kept by its deadline (KEYS[4]), any other by its last poll (KEYS[3]).
const READ = `
if ARGV[4] == '' then
  if redis.call('EXISTS', KEYS[1]) == 0 then return false end
elseif redis.call('HGET', KEYS[1], 'userId') ~= ARGV[4] then
  return false
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('HSET', KEYS[1], 'lastPollMs', ARGV[2])
local timeout = redis.call('HGET', KEYS[1], 'idleTimeoutMs')
if timeout then
  redis.call('ZADD', KEYS[4], tonumber(ARGV[2]) + tonumber(timeout), ARGV[3])
else
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
end
return redis.call('ZRANGE', KEYS[2], 0, -1)
`;

// KEYS: the queue's hash, events and sources, the realm's info hash, poll and deadline sets, the
// user's set and the realm's all_public_streams set. ARGV: the queue id, now and the default idle
// time ('' for both: delete whether idle or not).
const DELETE = `${DELETE_QUEUE}
local q = redis.call('HMGET', KEYS[1], 'lastPollMs', 'idleTimeoutMs')
if q[1] and ARGV[2] ~= '' and tonumber(q[1]) + tonumber(q[2] or ARGV[3]) > tonumber(ARGV[2]) then return 0 end
deleteQueue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1])
redis.call('SREM', KEYS[7], ARGV[1])
redis.call('SREM', KEYS[8], ARGV[1])
if not q[1] then return 0 end
return 1
`;

// The queues in the sets KEYS[4..] of one realm: per queue its id, its settings as an index into
// `settings`, which holds each distinct settings text once (a thousand queues of one client kind
// have one), then the other fields of its info and its last poll. It also prunes ids whose queue
// is gone, so the sets cannot grow without bound. Answers { settings texts, flat queue rows }.
const QUEUES_OF_SETS = `${QUEUE_INFO}
local settings = {}
local settingsIndex = {}
local out = {}
for s = 4, #KEYS do
  local setKey = KEYS[s]
  for _, id in ipairs(redis.call('SMEMBERS', setKey)) do
    local info = redis.call('HGET', KEYS[1], id)
    if not info then
      redis.call('SREM', setKey, id)
    else
      local allPublic, since, timeout, text = unpackInfo(info)
      local index = settingsIndex[text]
      if not index then
        settings[#settings + 1] = text
        index = #settings
        settingsIndex[text] = index
      end
      out[#out + 1] = id
      out[#out + 1] = index
      out[#out + 1] = allPublic
      out[#out + 1] = since
      out[#out + 1] = string.format('%d', lastPoll(id, timeout, KEYS[2], KEYS[3]))
      out[#out + 1] = timeout
    end
  end
end
return { settings, out }
`;

const defined = new WeakSet<RedisClient>();

export function defineQueueScripts(redis: RedisClient): void {
  if (defined.has(redis)) return;
  defined.add(redis);
  redis.defineCommand("busQueueEvict", { numberOfKeys: 4, lua: EVICT });
  redis.defineCommand("busQueueAppendMany", { lua: APPEND_MANY });
  redis.defineCommand("busQueueRead", { numberOfKeys: 4, lua: READ });
  redis.defineCommand("busQueueDelete", { numberOfKeys: 8, lua: DELETE });
  redis.defineCommand("busQueuesOfSets", { lua: QUEUES_OF_SETS });
}
