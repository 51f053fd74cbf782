// Lua scripts of the Redis queue store: each keeps one queue consistent without a round trip
// per step. Every key a script touches comes in KEYS (none is built in Lua), and all of them are
// one realm's (keys.ts), so each call runs in one slot of a Redis Cluster. A script that finds
// queue ids in a set reads what it needs of them from the realm's `qinfo` hash and its sorted
// sets, keys it declared, and never their own hashes.
import type { Result } from "ioredis";
import type { RedisClient } from "./connection";

/** A queue log entry: its stream id and fields, `c <queue id> i <packed info>` or `d <queue id>`. */
export type QueueLogEntry = [string, string[]];
export type QueueLogAnswer = [0, QueueLogEntry[]] | [1, string, string[]];

/**
 * Entries a realm's queue log keeps, about: a node whose copy of the realm's queues is older than
 * this many creations and deletions reads them afresh.
 */
export const QUEUE_LOG_LENGTH = 10_000;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /**
     * Appends to many queues of one realm in one call, each queue at most once per source id, and
     * announces them. KEYS: the realm's poll and deadline sets, its info hash and its queue log.
     * ARGV: now, dedupe window, max events, the queue-ready channel, the most bytes of event text
     * an announcement carries, the realm's key tag (each queue's keys are named from it), the
     * source ids (their count first), the distinct events' JSON (their count first), then the
     * queues, a line each of fields separated by spaces: its id and its number of parts, and per
     * part (in order) its source's 1-based index, its event count and each event's 1-based text
     * index. Answers the number of queues that got events.
     */
    busQueueAppendMany(
      pollKey: string, deadlineKey: string, infoKey: string, logKey: string,
      ...args: (string | number)[]
    ): Result<number, Context>;
    /**
     * Makes a queue; answers the user's least recently polled queues past `limit`, never the new
     * one (the caller deletes them). Ids of queues already gone are dropped from the user's set.
     */
    busQueueCreate(
      queueKey: string, infoKey: string, logKey: string, pollKey: string, deadlineKey: string, userQueuesKey: string,
      queueId: string, userId: number, realmId: number, nowMs: number, idleTimeoutMs: number | "", info: string, limit: number,
    ): Result<string[], Context>;
    /** Remaining events as JSON, or null if the queue is gone. */
    /** Given an owner ('' for any), null also if the queue is another user's. */
    busQueueRead(
      queueKey: string, eventsKey: string, pollKey: string, deadlineKey: string,
      lastEventId: number, nowMs: number, queueId: string, ownerId: number | "",
    ): Result<string[] | null, Context>;
    /**
     * Acknowledges events of many queues of one realm, as a read does, without answering them.
     * KEYS: the realm's poll and deadline sets. ARGV: now, the realm's key tag, and a line
     * "<queue id> <last event id>" per queue. Answers the ids of queues missing or not the user's
     * their id names.
     */
    busQueueAcknowledgeMany(pollKey: string, deadlineKey: string, now: number, realmTag: string, acks: string): Result<string[], Context>;
    /** 1 if deleted; 0 if missing or (when expiring, given the time) not idle for its timeout. */
    busQueueDelete(
      queueKey: string, eventsKey: string, sourcesKey: string, infoKey: string, pollKey: string, deadlineKey: string,
      userQueuesKey: string, logKey: string,
      queueId: string, nowMs: number | "", defaultIdleMs: number | "",
    ): Result<number, Context>;
    /**
     * What a realm's queue log holds after `lastId` (realm-queues.ts). KEYS: the realm's queue log
     * and info hash. ARGV: the last entry applied ('' for none), the most entries to answer. Answers
     * [0, entries] when they follow on from `lastId`, else [1, the log's last id, the info hash as
     * HGETALL answers it]: the realm's queues afresh, as of that entry.
     */
    busQueueLogSince(logKey: string, infoKey: string, lastId: string, maxEntries: number): Result<QueueLogAnswer, Context>;
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

// Deletes a queue's keys and its entries in the realm's hash and sorted sets, and logs the
// deletion in the realm's queue log (realm-queues.ts). Its entry in the user's set goes when the
// eviction script next reads that set, unless the caller removes it too.
const DELETE_QUEUE = `
local function deleteQueue(queueKey, eventsKey, sourcesKey, infoKey, pollKey, deadlineKey, logKey, queueId)
  redis.call('DEL', queueKey, eventsKey, sourcesKey)
  if redis.call('HDEL', infoKey, queueId) == 1 then
    redis.call('XADD', logKey, 'MAXLEN', '~', ${QUEUE_LOG_LENGTH}, '*', 'd', queueId)
  end
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
//
// The script publishes the queue-ready announcement itself (queue-store.ts, announcement): a
// fan-out is several calls, and each call's queues are woken while Redis runs the next, where a
// PUBLISH sent after the replies would wait behind every call already pipelined. Per queue
// announced: [id, first id, 0-based text indexes], or only its id when the texts are too long
// to send along. A source id already applied is announced again (the earlier attempt may have
// died between appending and publishing; a spurious wake-up costs a poller one read), and so is a
// queue dropped for overflowing, so that a waiting poll learns at once that it is gone.
const APPEND_MANY = `${DELETE_QUEUE}
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local maxEvents = tonumber(ARGV[3])
local channel = ARGV[4]
local maxAnnouncedBytes = tonumber(ARGV[5])
local tag = ARGV[6]
local sourceCount = tonumber(ARGV[7])
local sourceBase = 7
local variants = tonumber(ARGV[sourceBase + sourceCount + 1])
local textBase = sourceBase + sourceCount + 1
local announced = {}
local others = {}
-- Each distinct text without its closing brace, once: a queue's copy is one concatenation.
local opened = {}
for v = 1, variants do opened[v] = string.sub(ARGV[textBase + v], 1, -2) end
-- Adds the events (their text indexes, in order) to a queue that exists and whose sources have
-- not reached it, or drops the queue if they would take it past the limit. False if dropped.
local function addEvents(queueId, queueKey, eventsKey, sourcesKey, indexes)
  local n = #indexes
  if maxEvents > 0 and redis.call('ZCARD', eventsKey) + n > maxEvents then
    deleteQueue(queueKey, eventsKey, sourcesKey, KEYS[3], KEYS[1], KEYS[2], KEYS[4], queueId)
    others[#others + 1] = queueId
    return false
  end
  local first = redis.call('HINCRBY', queueKey, 'nextId', n) - n
  -- Sources past the window are dropped every 16th event, not on every append: the set stays
  -- small, and a source id is never reused.
  if math.floor((first + n) / 16) > math.floor(first / 16) then
    redis.call('ZREMRANGEBYSCORE', sourcesKey, '-inf', now - window)
  end
  local entry = { queueId, first }
  local args = {}
  for j, index in ipairs(indexes) do
    local id = first + j - 1
    entry[#entry + 1] = index - 1
    args[#args + 1] = id
    args[#args + 1] = opened[index] .. ',"id":' .. string.format('%d', id) .. '}'
    if #args >= 1000 then
      redis.call('ZADD', eventsKey, unpack(args))
      args = {}
    end
  end
  if #args > 0 then redis.call('ZADD', eventsKey, unpack(args)) end
  announced[#announced + 1] = entry
  return true
end
-- One queue getting one event of one source, as every queue of a fan-out does: no table of
-- fields or parts, and the source marked and tested in one command (ZADD NX; a queue dropped for
-- overflowing takes the mark with it). The script's time is mostly Lua's rather than its
-- commands': this path took a fan-out's append from about 13.4 to 10.8 µs of Redis per queue.
local function appendOne(queueId, source, index)
  local queueKey = tag .. 'q:' .. queueId
  if redis.call('EXISTS', queueKey) == 0 then return end
  local sourcesKey = tag .. 'qs:' .. queueId
  if redis.call('ZADD', sourcesKey, 'NX', now, source) == 0 then
    others[#others + 1] = queueId
  else
    addEvents(queueId, queueKey, tag .. 'qe:' .. queueId, sourcesKey, { index })
  end
end
-- Any other line: its fields are its id, its number of parts, and per part its source's index,
-- its event count and each event's text index.
local function appendParts(line)
  local fields = {}
  for field in string.gmatch(line, '%S+') do fields[#fields + 1] = field end
  local queueId = fields[1]
  local parts = tonumber(fields[2])
  -- Named from the realm's tag as keys.ts names them (see ACKNOWLEDGE_MANY).
  local queueKey = tag .. 'q:' .. queueId
  if redis.call('EXISTS', queueKey) == 0 then return end
  local sourcesKey = tag .. 'qs:' .. queueId
  -- Its parts: [source, index in fields of its first text index, event count].
  local list = {}
  local sources = {}
  local at = 3
  for p = 1, parts do
    local source = ARGV[sourceBase + tonumber(fields[at])]
    local count = tonumber(fields[at + 1])
    list[p] = { source, at + 2, count }
    sources[p] = source
    at = at + 2 + count
  end
  -- The parts whose source has not reached the queue yet (nor came twice in this call), their
  -- events' text indexes in order, and the marks of their sources.
  local applied = redis.call('ZMSCORE', sourcesKey, unpack(sources))
  local seen = {}
  local indexes = {}
  local marks = {}
  for p = 1, parts do
    local source, from, count = list[p][1], list[p][2], list[p][3]
    if not applied[p] and not seen[source] then
      seen[source] = true
      marks[#marks + 1] = now
      marks[#marks + 1] = source
      for j = 0, count - 1 do indexes[#indexes + 1] = tonumber(fields[from + j]) end
    end
  end
  if #marks == 0 then
    others[#others + 1] = queueId
  elseif addEvents(queueId, queueKey, tag .. 'qe:' .. queueId, sourcesKey, indexes) then
    redis.call('ZADD', sourcesKey, unpack(marks))
  end
end
-- A line per queue, given as one argument: as hundreds of arguments they cost the node several
-- times more to send than the events did.
for line in string.gmatch(ARGV[textBase + variants + 1], '[^\\n]+') do
  local oneId, oneSource, oneText = string.match(line, '^(%S+) 1 (%d+) 1 (%d+)$')
  if oneId then appendOne(oneId, ARGV[sourceBase + tonumber(oneSource)], tonumber(oneText)) else appendParts(line) end
end
if #announced == 0 and #others == 0 then return 0 end
local textBytes = 0
local texts = {}
for v = 1, variants do
  texts[v] = ARGV[textBase + v]
  textBytes = textBytes + #texts[v]
end
local message
if #announced == 0 or textBytes > maxAnnouncedBytes then
  local ids = {}
  for _, entry in ipairs(announced) do ids[#ids + 1] = entry[1] end
  for _, id in ipairs(others) do ids[#ids + 1] = id end
  message = cjson.encode(ids)
elseif #others == 0 then
  message = cjson.encode({ texts = texts, queues = announced })
else
  message = cjson.encode({ texts = texts, queues = announced, ids = others })
end
redis.call('PUBLISH', channel, message)
return #announced
`;

// A user's queues past the limit, least recently polled first; ids of queues already gone are
// dropped from the user's set.
const EVICT_FUNCTION = `${QUEUE_INFO}
local function evict(userQueuesKey, infoKey, pollKey, deadlineKey, limitArg, keepId)
  local limit = tonumber(limitArg)
  local live = {}
  for _, id in ipairs(redis.call('SMEMBERS', userQueuesKey)) do
    local info = redis.call('HGET', infoKey, id)
    if not info then
      redis.call('SREM', userQueuesKey, id)
    elseif id ~= keepId then
      local _, _, timeout = unpackInfo(info)
      live[#live + 1] = { id = id, polled = lastPoll(id, timeout, pollKey, deadlineKey) }
    end
  end
  local evicted = {}
  local excess = #live + 1 - limit
  if excess <= 0 then return evicted end
  table.sort(live, function(a, b) return a.polled < b.polled end)
  for i = 1, excess do evicted[#evicted + 1] = live[i].id end
  return evicted
end
`;

// Makes a queue (its hash, its settings in the realm's hash, its line in the queue log, the
// user's set and the poll or deadline set) and answers the user's queues past the limit, which
// the caller deletes. One script rather than a transaction of six commands: a registration's
// commands each cost the node more than Redis. KEYS: the queue's hash, the realm's info hash,
// queue log, poll and deadline sets, the user's set. ARGV: the id, user, realm, now, the idle
// timeout ('' for the default), the packed settings, the most queues a user keeps.
const CREATE = `${EVICT_FUNCTION}
local queueKey, infoKey, logKey, pollKey, deadlineKey, userQueuesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, now, timeout, info = ARGV[1], ARGV[4], ARGV[5], ARGV[6]
if timeout == '' then
  redis.call('HSET', queueKey, 'userId', ARGV[2], 'realmId', ARGV[3], 'lastPollMs', now, 'nextId', 0)
else
  redis.call('HSET', queueKey, 'userId', ARGV[2], 'realmId', ARGV[3], 'lastPollMs', now, 'nextId', 0, 'idleTimeoutMs', timeout)
end
redis.call('HSET', infoKey, id, info)
redis.call('XADD', logKey, 'MAXLEN', '~', ${QUEUE_LOG_LENGTH}, '*', 'c', id, 'i', info)
redis.call('SADD', userQueuesKey, id)
if timeout == '' then
  redis.call('ZADD', pollKey, now, id)
else
  redis.call('ZADD', deadlineKey, tonumber(now) + tonumber(timeout), id)
end
return evict(userQueuesKey, infoKey, pollKey, deadlineKey, ARGV[7], id)
`;

// A queue with its own idle timeout (its hash's idleTimeoutMs, which the caller read with its
// owner) is kept by its deadline, any other by its last poll. A queue's client acknowledged the
// events through lastEventId and polled at now: both the read and the acknowledgment of many
// queues record it.
const ACKNOWLEDGE = `
local function acknowledge(queueKey, eventsKey, pollKey, deadlineKey, queueId, lastEventId, now, timeout)
  redis.call('ZREMRANGEBYSCORE', eventsKey, '-inf', lastEventId)
  redis.call('HSET', queueKey, 'lastPollMs', now)
  if timeout then
    redis.call('ZADD', deadlineKey, tonumber(now) + tonumber(timeout), queueId)
  else
    redis.call('ZADD', pollKey, now, queueId)
  end
end
`;

const READ = `${ACKNOWLEDGE}
local q = redis.call('HMGET', KEYS[1], 'userId', 'idleTimeoutMs')
if not q[1] or (ARGV[4] ~= '' and q[1] ~= ARGV[4]) then return false end
acknowledge(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[1], ARGV[2], q[2])
return redis.call('ZRANGE', KEYS[2], 0, -1)
`;

// KEYS: the realm's poll and deadline sets. ARGV: now, the realm's key tag, then one line per queue,
// "<queue id> <last event id>". Each queue's own keys are named here from the tag, as keys.ts
// names them (BusKeys.queue, queueEvents), as BullMQ's scripts name a job's keys: they share the
// tag, so the slot, of the declared keys. Given as arguments they were most of what an
// acknowledgment cost the node to send (two key names each, made and encoded per poll). Answers the
// ids of the queues missing or not the user's their id names, which are left as they are.
const ACKNOWLEDGE_MANY = `${ACKNOWLEDGE}
local now, tag = ARGV[1], ARGV[2]
local missing = {}
for queueId, lastEventId in string.gmatch(ARGV[3], '([^ \\n]+) ([^\\n]+)') do
  local queueKey = tag .. 'q:' .. queueId
  local q = redis.call('HMGET', queueKey, 'userId', 'idleTimeoutMs')
  if q[1] ~= string.match(queueId, '^%d+:(%d+):') then
    missing[#missing + 1] = queueId
  else
    acknowledge(queueKey, tag .. 'qe:' .. queueId, KEYS[1], KEYS[2], queueId, lastEventId, now, q[2])
  end
end
return missing
`;

// KEYS: the queue's hash, events and sources, the realm's info hash, poll and deadline sets, the
// user's set and the realm's queue log. ARGV: the queue id, now and the default idle
// time ('' for both: delete whether idle or not).
const DELETE = `${DELETE_QUEUE}
local q = redis.call('HMGET', KEYS[1], 'lastPollMs', 'idleTimeoutMs')
if q[1] and ARGV[2] ~= '' and tonumber(q[1]) + tonumber(q[2] or ARGV[3]) > tonumber(ARGV[2]) then return 0 end
deleteQueue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[8], ARGV[1])
redis.call('SREM', KEYS[7], ARGV[1])
if not q[1] then return 0 end
return 1
`;

// A realm's queue log after an entry, or the realm's queues afresh when entries after it may
// have been trimmed (the log's first entry is later than it), or there are more than a node
// should apply one by one.
const LOG_SINCE = `
local function later(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local lastId = ARGV[1]
local maxEntries = tonumber(ARGV[2])
if lastId ~= '' then
  local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if (first == nil and lastId == '0-0') or (first ~= nil and not later(first[1], lastId)) then
    local entries = redis.call('XRANGE', KEYS[1], '(' .. lastId, '+', 'COUNT', maxEntries + 1)
    if #entries <= maxEntries then return { 0, entries } end
  end
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
return { 1, last and last[1] or '0-0', redis.call('HGETALL', KEYS[2]) }
`;

const defined = new WeakSet<RedisClient>();

export function defineQueueScripts(redis: RedisClient): void {
  if (defined.has(redis)) return;
  defined.add(redis);
  redis.defineCommand("busQueueCreate", { numberOfKeys: 6, lua: CREATE });
  redis.defineCommand("busQueueAppendMany", { numberOfKeys: 4, lua: APPEND_MANY });
  redis.defineCommand("busQueueRead", { numberOfKeys: 4, lua: READ });
  redis.defineCommand("busQueueAcknowledgeMany", { numberOfKeys: 2, lua: ACKNOWLEDGE_MANY });
  redis.defineCommand("busQueueDelete", { numberOfKeys: 8, lua: DELETE });
  redis.defineCommand("busQueueLogSince", { numberOfKeys: 2, lua: LOG_SINCE });
}
