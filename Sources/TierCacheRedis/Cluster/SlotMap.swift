extension ClusterRedisClient {
    /// Which node owns each slot, as one `CLUSTER SLOTS` answer has it.
    struct SlotMap {
        /// Per slot, the index of its owner in `nodes`; -1 for none.
        var owners = [Int](repeating: -1, count: HashSlot.count)
        var nodes: [RedisEndpoint] = []
        var coveredSlots = 0

        init(_ reply: RESPValue, queried: RedisEndpoint) throws(RedisError) {
            guard case .array(let ranges) = reply else {
                throw .protocolViolation("CLUSTER SLOTS did not answer an array")
            }
            for range in ranges {
                guard case .array(let fields) = range, fields.count >= 3,
                    case .integer(let first) = fields[0], case .integer(let last) = fields[1],
                    case .array(let primary) = fields[2], primary.count >= 2,
                    let host = Self.host(primary[0]), case .integer(let port) = primary[1],
                    first >= 0, last < HashSlot.count, first <= last, (1...65535).contains(port)
                else {
                    throw .protocolViolation("a CLUSTER SLOTS range is malformed")
                }
                var endpoint = queried
                endpoint.host = host.isEmpty || host == "?" ? queried.host : host
                endpoint.port = Int(port)
                endpoint.database = 0
                let index =
                    nodes.firstIndex(of: endpoint)
                    ?? {
                        nodes.append(endpoint)
                        return nodes.count - 1
                    }()
                for slot in Int(first)...Int(last) {
                    if owners[slot] < 0 { coveredSlots += 1 }
                    owners[slot] = index
                }
            }
        }

        /// A node's endpoint as `CLUSTER SLOTS` gives it; "" (the queried host) for NULL, which
        /// `cluster-preferred-endpoint-type unknown-endpoint` sends (a cluster behind one
        /// address), as a redirect's empty or `?` host.
        private static func host(_ value: RESPValue) -> String? {
            if case .null = value { return "" }
            return value.string
        }
    }
}

extension ClusterRedisClient.SlotMap {
    /// A map as runs of slots with one owner: equal for two answers that route every slot alike,
    /// whatever order each lists its nodes in.
    struct Routes: Hashable {
        struct Run: Hashable {
            var first: Int
            var last: Int
            /// nil for slots without an owner.
            var owner: RedisEndpoint?
        }

        var runs: [Run] = []

        /// The routes of `owners` (per slot, an index into `nodes`, or -1).
        init(owners: [Int], nodes: [RedisEndpoint]) {
            for (slot, index) in owners.enumerated() {
                let owner = nodes.indices.contains(index) ? nodes[index] : nil
                if let lastRun = runs.last, lastRun.owner == owner, lastRun.last == slot - 1 {
                    runs[runs.count - 1].last = slot
                } else {
                    runs.append(Run(first: slot, last: slot, owner: owner))
                }
            }
        }
    }

    var routes: Routes { Routes(owners: owners, nodes: nodes) }
}

/// The slot maps the nodes asked in one refresh answer, and which one to install.
///
/// A complete map (every slot owned) that more than half of the nodes asked answer is decided
/// at once. Once every node has answered or failed, the complete map most of them answered is
/// chosen; between maps answered as often, one that differs from the installed map (a node that
/// has not heard of a change yet still answers the old one), else the first answered. With no
/// complete map, the one covering the most slots.
struct SlotMapVotes {
    typealias SlotMap = ClusterRedisClient.SlotMap

    /// How many nodes were asked.
    let asked: Int
    /// The routes of the map installed now, if any.
    let installed: SlotMap.Routes?
    private var complete: [(routes: SlotMap.Routes, map: SlotMap, votes: Int)] = []
    private var widestPartial: SlotMap?

    init(asked: Int, installed: SlotMap.Routes?) {
        self.asked = asked
        self.installed = installed
    }

    /// Counts one node's answer; returns the map to install when a majority of the nodes asked
    /// has answered it.
    mutating func add(_ map: SlotMap) -> SlotMap? {
        guard map.coveredSlots == HashSlot.count else {
            if map.coveredSlots > widestPartial?.coveredSlots ?? 0 { widestPartial = map }
            return nil
        }
        let routes = map.routes
        let index: Int
        if let known = complete.firstIndex(where: { $0.routes == routes }) {
            complete[known].votes += 1
            index = known
        } else {
            complete.append((routes, map, 1))
            index = complete.count - 1
        }
        return complete[index].votes * 2 > asked ? map : nil
    }

    /// The map to install once every node asked has answered or failed; nil when none answered
    /// a map covering any slot.
    var choice: SlotMap? {
        var chosen: (routes: SlotMap.Routes, map: SlotMap, votes: Int)?
        for candidate in complete {
            guard let best = chosen else {
                chosen = candidate
                continue
            }
            if candidate.votes > best.votes
                || candidate.votes == best.votes && best.routes == installed && candidate.routes != installed
            {
                chosen = candidate
            }
        }
        return chosen?.map ?? widestPartial
    }
}
