import NIOCore
@_spi(TierCacheInternals) import TierCache

/// A Redis Cluster: the slot map comes from `CLUSTER SLOTS`, each command goes to the primary that
/// owns its key's slot, `MOVED` updates the map (and triggers a refresh) and retries, `ASK` retries
/// once on the named node after `ASKING`. A node that stops answering makes its slots' commands
/// fail fast (its pool backs off) until the cluster fails over and a refresh finds the new owner.
final class ClusterRedisClient: RedisClient {
    private struct State {
        var owners = [Int](repeating: -1, count: HashSlot.count)
        var nodes: [RedisEndpoint] = []
        var pools: [RedisEndpoint: RedisConnectionPool] = [:]
        var lastRefresh: ContinuousClock.Instant?
        /// The reload running, if any: a forced one joins it, others skip (they would ask the
        /// same nodes; at startup every command's forced reload asked every seed).
        var refresh: Task<Void, any Error>?
        /// Pools retired from the map, closed after the command timeout (or by `close()`).
        var retiring: [ObjectIdentifier: RedisConnectionPool] = [:]
    }

    private let seeds: [RedisEndpoint]
    private let group: any EventLoopGroup
    private let options: RedisConnectionPool.Options
    private let state = Locked(State())
    private static let maximumRedirections = 5

    init(seeds: [RedisEndpoint], group: any EventLoopGroup, options: RedisConnectionPool.Options) {
        self.seeds = seeds
        self.group = group
        self.options = options
    }

    private func pool(for endpoint: RedisEndpoint) -> RedisConnectionPool {
        state.withLock { state in
            if let pool = state.pools[endpoint] { return pool }
            let pool = RedisConnectionPool(endpoint: endpoint, group: group, options: options)
            state.pools[endpoint] = pool
            return pool
        }
    }

    /// Reloads the slot map, asking the known nodes and the seeds at once (`CLUSTER SLOTS`) and
    /// taking the map that covers every slot as most of them answer it: a primary cut off from
    /// the cluster bus but reachable from here still answers its old map, in which it owns slots
    /// the majority has given its promoted replica; taking the first complete answer, as before,
    /// a client that knew that primary first routed to it (and its commands then failed, or
    /// wrote where no other process reads) until the partition healed. The map is installed as
    /// soon as more than half of the nodes asked have answered it, without waiting for a node
    /// that does not answer; between complete maps that as many nodes answer, one that differs
    /// from the installed map wins (a node that has not yet heard of a change answers the old).
    ///
    /// With no complete answer, the answer covering the most slots is installed: a node that has
    /// not joined the cluster yet, or was rebuilt with an empty `nodes.conf` (a pod replaced under
    /// the same name), answers an empty map, which installed routed nothing and left coherence
    /// tracking no primary at all; a node that has not heard all the gossip yet answers part of
    /// it. One reload runs at a time: a forced one waits for the one running, and others skip
    /// it; unless `force`, one starts per 100 ms: a dead node's failing commands, which each ask
    /// for one, make a few reloads, not a storm. The reload runs in a task of its own, so that a
    /// caller cancelled meanwhile does not end the count early and install a minority's map.
    func refreshSlots(force: Bool = false) async throws(RedisError) {
        let reload = state.withLock { state -> Task<Void, any Error>? in
            if let running = state.refresh { return force ? running : nil }
            if !force, let last = state.lastRefresh, ContinuousClock.now - last < .milliseconds(100) { return nil }
            state.lastRefresh = .now
            let candidates = state.nodes + seeds.filter { !state.nodes.contains($0) }
            let (owners, nodes) = (state.owners, state.nodes)
            let task = Task { [self] in
                // Cleared under the lock this task was stored under, so after it was stored.
                defer { self.state.withLock { $0.refresh = nil } }
                // The installed map's routes, made here rather than under the lock (a pass over
                // every slot).
                try await reloadSlots(asking: candidates, installed: SlotMap.Routes(owners: owners, nodes: nodes))
            }
            state.refresh = task
            return task
        }
        guard let reload else { return }
        do {
            try await reload.value
        } catch let error as RedisError {
            throw error
        } catch {
            throw .unavailable("the slot map's reload failed: \(error)")
        }
    }

    /// Asks `candidates` for the slot map and installs the one their answers choose
    /// (``SlotMapVotes``); `installed` is the map's routes now.
    private func reloadSlots(
        asking candidates: [RedisEndpoint], installed current: SlotMap.Routes
    ) async throws(RedisError) {
        var votes = SlotMapVotes(asked: candidates.count, installed: current)
        var lastError = RedisError.unavailable("no cluster node answered CLUSTER SLOTS")
        for await (candidate, answer) in askForSlots(candidates) {
            switch answer {
            case .success(let map):
                if map.coveredSlots == 0 {
                    lastError = .unavailable("\(candidate) answered CLUSTER SLOTS with no slots")
                }
                if let decided = votes.add(map) { return install(decided) }
            case .failure(let error):
                lastError = error
            }
        }
        guard let chosen = votes.choice else { throw lastError }
        install(chosen)
    }

    /// Each of `candidates`' `CLUSTER SLOTS` answers (or its error) as it arrives. The requests
    /// run in tasks of their own, so that a caller that has decided need not wait for a node
    /// that does not answer (each request ends by the command timeout).
    private func askForSlots(
        _ candidates: [RedisEndpoint]
    ) -> AsyncStream<(RedisEndpoint, Result<SlotMap, RedisError>)> {
        let (answers, continuation) = AsyncStream.makeStream(
            of: (RedisEndpoint, Result<SlotMap, RedisError>).self, bufferingPolicy: .unbounded)
        let asked = candidates.map { ($0, pool(for: $0)) }
        let asking = Task {
            await withTaskGroup(of: Void.self) { group in
                for (candidate, pool) in asked {
                    group.addTask {
                        continuation.yield((candidate, await Self.slotMap(from: pool, queried: candidate)))
                    }
                }
            }
            continuation.finish()
        }
        // Decided early, the reload stops listening: the requests still out are cancelled.
        continuation.onTermination = { _ in asking.cancel() }
        return answers
    }

    /// The slot map the node behind `pool` (reached as `queried`) answers.
    private static func slotMap(
        from pool: RedisConnectionPool, queried: RedisEndpoint
    ) async -> Result<
        SlotMap, RedisError
    > {
        do throws(RedisError) {
            let reply = try await pool.send([Array("CLUSTER".utf8), Array("SLOTS".utf8)])
            if case .error(let message) = reply { throw .server(message) }
            return .success(try SlotMap(reply, queried: queried))
        } catch {
            return .failure(error)
        }
    }

    /// Installs `map`. A map that covers every slot also retires the pools of nodes it no longer
    /// names (a failed primary, a node removed by resharding), the seeds' excepted: a fleet whose
    /// cluster is rebuilt node by node over months would otherwise keep a pool, and its connection
    /// attempts, for every address that ever owned a slot, and a dead former primary's open
    /// breaker would keep ``RedisTier/isCircuitOpen`` true for good. (A partial map, from a node
    /// that has not heard all the gossip yet, leaves out live primaries: their pools stay.) A
    /// retired pool closes after the command timeout, so that the commands already on it end as
    /// they would have (a reply or a redirect).
    private func install(_ map: SlotMap) {
        let retired = state.withLock { state in
            state.owners = map.owners
            state.nodes = map.nodes
            guard map.coveredSlots == HashSlot.count else { return [RedisConnectionPool]() }
            let kept = Set(map.nodes).union(seeds)
            let retired = state.pools.filter { !kept.contains($0.key) }
            for (endpoint, pool) in retired {
                state.pools[endpoint] = nil
                state.retiring[ObjectIdentifier(pool)] = pool
            }
            return Array(retired.values)
        }
        guard !retired.isEmpty else { return }
        group.next().scheduleTask(in: options.commandTimeout) { [self] in
            for pool in retired {
                pool.close()
                self.state.withLock { $0.retiring[ObjectIdentifier(pool)] = nil }
            }
        }
    }

    private func owner(of slot: Int) -> RedisEndpoint? {
        state.withLock { state in
            let index = state.owners[slot]
            return index >= 0 ? state.nodes[index] : nil
        }
    }

    func send(_ arguments: [[UInt8]], key: [UInt8]?, readingKeyFirst: Bool) async throws(RedisError) -> RESPValue {
        try await routed(key: key, errorMessage: { if case .error(let message) = $0 { message } else { nil } }) {
            pool, asking throws(RedisError) in
            try await pool.send(arguments, asking: asking, readingFirst: readingKeyFirst ? key : nil)
        }
    }

    func read(
        _ arguments: [[UInt8]], key: [UInt8]?, decoder: any RedisRecordDecoder
    ) async throws(RedisError) -> RedisRecordsReply {
        try await routed(key: key, errorMessage: { if case .value(.error(let message)) = $0 { message } else { nil } })
        {
            pool, asking throws(RedisError) in
            try await pool.read(arguments, asking: asking, decoder: decoder)
        }
    }

    /// Sends a command to the primary that owns `key`'s slot with `attempt`, following `MOVED`
    /// and `ASK` (read from the reply by `errorMessage`); other error replies throw.
    private func routed<Reply>(
        key: [UInt8]?, errorMessage: (Reply) -> String?,
        _ attempt: (RedisConnectionPool, _ asking: Bool) async throws(RedisError) -> Reply
    ) async throws(RedisError) -> Reply {
        if state.withLock({ $0.nodes.isEmpty }) { try await refreshSlots(force: true) }
        let slot = key.map(HashSlot.of) ?? 0
        guard var target = owner(of: slot) ?? state.withLock({ $0.nodes.first }) else {
            throw .unavailable("the cluster has no known nodes")
        }
        var asking = false
        for _ in 0...Self.maximumRedirections {
            let reply: Reply
            do {
                reply = try await attempt(pool(for: target), asking)
            } catch {
                // The node may have failed over: learn the new map for the next commands. A node
                // whose circuit is open (`unavailable`) counts too: after a failover it stays dead,
                // and only a new map moves its slots to the promoted replica (the reload is at most
                // one per 100 ms, so a dead node does not turn every command into a reload).
                try? await refreshSlots()
                throw error
            }
            guard let message = errorMessage(reply) else { return reply }
            if let redirect = Self.redirection(message, moved: "MOVED ", from: target) {
                state.withLock { state in
                    let index =
                        state.nodes.firstIndex(of: redirect)
                        ?? {
                            state.nodes.append(redirect)
                            return state.nodes.count - 1
                        }()
                    state.owners[slot] = index
                }
                try? await refreshSlots()
                target = redirect
                asking = false
            } else if let redirect = Self.redirection(message, moved: "ASK ", from: target) {
                target = redirect
                asking = true
            } else {
                throw .server(message)
            }
        }
        throw .server("too many cluster redirections for one command")
    }

    /// The node `MOVED 3999 127.0.0.1:6381` (or `ASK …`, as `prefix` says) sends a command to
    /// (on the same host for `:6381` and `?:6381`),
    /// reached as `target` is: the same credentials and TLS, so that it equals the node
    /// `CLUSTER SLOTS` names (a node known twice is scanned twice, and looks like a change of
    /// primaries to coherence, which then empties the upper tiers).
    static func redirection(_ message: String, moved prefix: String, from target: RedisEndpoint) -> RedisEndpoint? {
        guard message.hasPrefix(prefix) else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count >= 3, let colon = parts[2].lastIndex(of: ":"),
            let port = Int(parts[2][parts[2].index(after: colon)...])
        else { return nil }
        var redirect = target
        // An unknown endpoint (`:6381`, or `?:6381` where a node has no hostname) is on the host
        // the command went to, as in `CLUSTER SLOTS` (`apply`).
        let host = String(parts[2][..<colon])
        redirect.host = host.isEmpty || host == "?" ? target.host : host
        redirect.port = port
        return redirect
    }

    func primaries() async throws(RedisError) -> [RedisEndpoint] {
        if state.withLock({ $0.nodes.isEmpty }) { try await refreshSlots(force: true) }
        return state.withLock { $0.nodes }
    }

    func refreshTopology() async {
        try? await refreshSlots(force: true)
    }

    func send(_ arguments: [[UInt8]], to node: RedisEndpoint) async throws(RedisError) -> RESPValue {
        let reply = try await pool(for: node).send(arguments)
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    /// The primaries of the current slot map whose breaker is open (before there is a map, any
    /// node's: the seeds): a seed that failed, then left the map, is never asked again and its
    /// breaker never closes, though the cluster serves every slot.
    var nodesWithOpenCircuit: [RedisEndpoint] {
        state.withLock { state in
            state.pools.filter { endpoint, pool in
                pool.isCircuitOpen && (state.nodes.isEmpty || state.nodes.contains(endpoint))
            }.map(\.key)
        }
    }

    /// The nodes this client keeps a connection pool for.
    var pooledEndpoints: [RedisEndpoint] { state.withLock { Array($0.pools.keys) } }

    func close() {
        let pools = state.withLock { Array($0.pools.values) + Array($0.retiring.values) }
        for pool in pools { pool.close() }
    }
}
