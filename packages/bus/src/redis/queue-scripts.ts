// Lua scripts of the Redis queue store: each keeps one queue consistent without a round trip
// per step. `uq:`/`apq:` keys are rebuilt from the prefix here; see keys.ts.
import type Redis from "ioredis";
import type { Result } from "ioredis";

declare module "ioredis" {
  interface RedisCommander<Context> {
    /**
     * Appends to many queues in one call, each queue at most once per source id: ARGV after the
     * five fixed ones (source id, now, dedupe window, max events, prefix) are the distinct events'
     * JSON (their count first), then per queue its id, its event count and each event's 1-based
     * index among them. Per queue, two numbers: the number of events added, -1 if the source id
     * was already applied, 0 if the queue is gone, -2 if the events took it past maxEvents (0: no
     * limit) and it was deleted; then the first added event's id (-1 if none).
     */
    busQueueAppendMany(pollKey: string, deadlineKey: string, ...args: (string | number)[]): Result<number[], Context>;
    /** Deletes the user's least recently polled queues past `limit`, never `keepId`; returns their ids. */
    busQueueEvict(
      userQueuesKey: string, pollKey: string, deadlineKey: string,
      prefix: string, limit: number, keepId: string,
    ): Result<string[], Context>;
    /** Remaining events as JSON, or null if the queue is gone. */
    /** Given an owner ('' for any), null also if the queue is another user's. */
    busQueueRead(
      queueKey: string, eventsKey: string, pollKey: string, deadlineKey: string,
      lastEventId: number, nowMs: number, queueId: string, ownerId: number | "",
    ): Result<string[] | null, Context>;
    /** 1 if deleted; 0 if missing or (when expiring, given the time) not idle for its timeout. */
    busQueueDelete(
      queueKey: string, eventsKey: string, sourcesKey: string, pollKey: string, deadlineKey: string,
      prefix: string, queueId: string, nowMs: number | "", defaultIdleMs: number | "",
    ): Result<number, Context>;
    /**
     * Every live queue in the given sets: the distinct settings texts, and per queue its id, the
     * 1-based index of its settings, then userId, realmId, allPublicStreams, since, lastPollMs and
     * idleTimeoutMs ('' when unset).
     */
    busQueuesOfSets(numKeys: number, ...args: string[]): Result<[string[], (string | number)[]], Context>;
    busQueuesOfUsers(prefix: string, realmId: number, ...userIds: number[]): Result<[string[], (string | number)[]], Context>;
  }
}

// Deletes a queue's keys and its entries in the indexes, given its hash's userId and realmId. The
// index keys are built from the prefix (ARGV), as keys.ts builds them.
const DELETE_QUEUE = `
local function deleteQueue(prefix, queueId, userId, realmId, pollKey, deadlineKey)
  redis.call('DEL', prefix .. 'q:' .. queueId, prefix .. 'qe:' .. queueId, prefix .. 'qs:' .. queueId)
  redis.call('SREM', prefix .. 'uq:' .. realmId .. ':' .. userId, queueId)
  redis.call('SREM', prefix .. 'apq:' .. realmId, queueId)
  redis.call('ZREM', pollKey, queueId)
  redis.call('ZREM', deadlineKey, queueId)
end
`;

// Appends events to many queues at once, each distinct event's JSON sent once (a message to a
// stream of 1,000 was 1,000 calls carrying 1.5 MB of the same text). Each event arrives as JSON
// without `id`; the id is spliced in as the last member rather than going through cjson, which
// would rewrite numbers and turn empty arrays into objects. A queue its client lets grow past the
// limit is dropped whole: its next poll learns BAD_EVENT_QUEUE_ID and registers again, which real
// clients do, rather than reading a queue with a hole in it. The queues' keys are built from
// the prefix (as keys.ts builds them): on one Redis server, not slot-safe on a Redis Cluster.
const APPEND_MANY = `${DELETE_QUEUE}
local sourceId = ARGV[1]
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local maxEvents = tonumber(ARGV[4])
local prefix = ARGV[5]
local variants = tonumber(ARGV[6])
local results = {}
local i = 7 + variants
while i <= #ARGV do
  local queueId = ARGV[i]
  local n = tonumber(ARGV[i + 1])
  local queueKey = prefix .. 'q:' .. queueId
  local eventsKey = prefix .. 'qe:' .. queueId
  local sourcesKey = prefix .. 'qs:' .. queueId
  local result = n
  local first = -1
  if redis.call('EXISTS', queueKey) == 0 then
    result = 0
  elseif redis.call('ZSCORE', sourcesKey, sourceId) then
    result = -1
  elseif maxEvents > 0 and redis.call('ZCARD', eventsKey) + n > maxEvents then
    local owner = redis.call('HMGET', queueKey, 'userId', 'realmId')
    deleteQueue(prefix, queueId, owner[1], owner[2], KEYS[1], KEYS[2])
    result = -2
  else
    redis.call('ZREMRANGEBYSCORE', sourcesKey, '-inf', now - window)
    redis.call('ZADD', sourcesKey, now, sourceId)
    first = redis.call('HINCRBY', queueKey, 'nextId', n) - n
    local args = {}
    for j = 1, n do
      local id = first + j - 1
      local json = ARGV[6 + tonumber(ARGV[i + 1 + j])]
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
end
return results
`;

// A user's queues past the limit, least recently polled first (ARGV: prefix, limit, the id to keep).
const EVICT = `${DELETE_QUEUE}
local prefix = ARGV[1]
local limit = tonumber(ARGV[2])
local live = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local q = redis.call('HMGET', prefix .. 'q:' .. id, 'userId', 'realmId', 'lastPollMs')
  if not q[1] then
    redis.call('SREM', KEYS[1], id)
  elseif id ~= ARGV[3] then
    live[#live + 1] = { id = id, userId = q[1], realmId = q[2], polled = tonumber(q[3]) }
  end
end
local evicted = {}
local excess = #live + 1 - limit
if excess <= 0 then return evicted end
table.sort(live, function(a, b) return a.polled < b.polled end)
for i = 1, excess do
  local q = live[i]
  deleteQueue(prefix, q.id, q.userId, q.realmId, KEYS[2], KEYS[3])
  evicted[#evicted + 1] = q.id
end
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

const DELETE = `${DELETE_QUEUE}
local q = redis.call('HMGET', KEYS[1], 'userId', 'realmId', 'lastPollMs', 'idleTimeoutMs')
if not q[1] then
  redis.call('ZREM', KEYS[4], ARGV[2])
  redis.call('ZREM', KEYS[5], ARGV[2])
  return 0
end
if ARGV[3] ~= '' and tonumber(q[3]) + tonumber(q[4] or ARGV[4]) > tonumber(ARGV[3]) then return 0 end
deleteQueue(ARGV[1], ARGV[2], q[1], q[2], KEYS[4], KEYS[5])
return 1
`;

// Adds to `out` each queue in a set of queue ids: its id, then the fields QUEUE_FIELDS names, its
// settings as an index into `settings`, which holds each distinct settings text once (a thousand
// queues of one client kind have one). It also prunes ids whose queue is gone, so the sets cannot
// grow without bound.
const COLLECT_QUEUES = `
local fields = { 'settings', 'userId', 'realmId', 'allPublicStreams', 'since', 'lastPollMs', 'idleTimeoutMs' }
local settings = {}
local settingsIndex = {}
local function collect(out, setKey, prefix)
  for _, id in ipairs(redis.call('SMEMBERS', setKey)) do
    local values = redis.call('HMGET', prefix .. 'q:' .. id, unpack(fields))
    if not values[1] then
      redis.call('SREM', setKey, id)
    else
      local index = settingsIndex[values[1]]
      if not index then
        settings[#settings + 1] = values[1]
        index = #settings
        settingsIndex[values[1]] = index
      end
      values[1] = index
      out[#out + 1] = id
      for i = 1, #fields do out[#out + 1] = values[i] or '' end
    end
  end
end
`;

// The queues of the sets KEYS; ARGV: prefix. Answers { settings texts, flat queue rows }.
const QUEUES_OF_SETS = `${COLLECT_QUEUES}
local out = {}
for _, setKey in ipairs(KEYS) do collect(out, setKey, ARGV[1]) end
return { settings, out }
`;

// The queues of a realm's users (their uq: sets). The sets' keys are built here (as the queue keys
// above are) from ARGV: prefix, realm id, then the user ids, since a message to a stream of 1,000
// would otherwise send 1,000 full key names (40 KiB) per batch.
const QUEUES_OF_USERS = `${COLLECT_QUEUES}
local out = {}
local base = ARGV[1] .. 'uq:' .. ARGV[2] .. ':'
for i = 3, #ARGV do collect(out, base .. ARGV[i], ARGV[1]) end
return { settings, out }
`;

export function defineQueueScripts(redis: Redis): void {
  redis.defineCommand("busQueueEvict", { numberOfKeys: 3, lua: EVICT });
  redis.defineCommand("busQueueAppendMany", { numberOfKeys: 2, lua: APPEND_MANY });
  redis.defineCommand("busQueueRead", { numberOfKeys: 4, lua: READ });
  redis.defineCommand("busQueueDelete", { numberOfKeys: 5, lua: DELETE });
  redis.defineCommand("busQueuesOfSets", { lua: QUEUES_OF_SETS });
  redis.defineCommand("busQueuesOfUsers", { numberOfKeys: 0, lua: QUEUES_OF_USERS });
}
