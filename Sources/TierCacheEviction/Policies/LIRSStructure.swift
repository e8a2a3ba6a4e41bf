/// The per-object links of LIRS: one record an object, holding its place in stack S and in
/// whichever list (Q or the non-resident list) holds it.
///
/// LIRS touches two lists on most requests, and on a miss five to seven links, so the links of one
/// object live together with its size (one cache line instead of seven arrays: every link moved
/// reads the size, for the lists' weights, and a separate array of sizes was a second miss per
/// object touched) and a request works on raw pointers (``LIRSLinks``) rather than paying an
/// array uniqueness check for every link it writes.
@usableFromInline
struct LIRSNode {
    static let nil32: Int32 = -1
    /// The size the object was last requested with.
    var size: UInt64 = 0
    /// Towards S's top (more recent); -1 at the top.
    var up: Int32 = nil32
    /// Towards S's bottom (older); -1 at the bottom.
    var down: Int32 = nil32
    /// Towards the list's head (more recent).
    var newer: Int32 = nil32
    /// Towards the list's tail (older).
    var older: Int32 = nil32
    var inStack = false
    /// ``LIRSLinks/noList``, ``LIRSLinks/q`` or ``LIRSLinks/nonResident``.
    var list: UInt8 = 0
}

/// The ends and weights of S, Q and the non-resident list: everything but the node records.
@usableFromInline
struct LIRSEnds {
    var top: Int32 = LIRSNode.nil32
    var bottom: Int32 = LIRSNode.nil32
    var qHead: Int32 = LIRSNode.nil32
    var qTail: Int32 = LIRSNode.nil32
    var nonResidentHead: Int32 = LIRSNode.nil32
    var nonResidentTail: Int32 = LIRSNode.nil32
    var qWeight: UInt64 = 0
    var nonResidentWeight: UInt64 = 0
    /// What the LIR objects (in S, in no list) add up to.
    var lirWeight: UInt64 = 0
    /// What every entry of S (LIR, resident and non-resident HIR) adds up to.
    var stackWeight: UInt64 = 0
}

/// S, Q and the non-resident list over node records, for the length of one request.
///
/// It holds pointers into the policy's arrays, valid only inside the `withUnsafe…` scope that made
/// them; every id it is given is below the node count. Entries that leave Q, S or the
/// non-resident list are noted in the policy's departures, through `departed` (a superset of
/// what left the cache or LIRS's memory), when the driver reads them.
@usableFromInline
struct LIRSLinks {
    static let noList: UInt8 = 0
    static let q: UInt8 = 1
    static let nonResident: UInt8 = 2

    let nodes: UnsafeMutablePointer<LIRSNode>
    /// The policy's own ends, written in place: a copy in and out of every request cost more
    /// than the request (a 56-byte load that waits on the small stores just made to it).
    let endsStorage: UnsafeMutablePointer<LIRSEnds>
    /// The policy's departures, appended to in place; nil when the driver never reads them.
    let departed: UnsafeMutablePointer<[UInt32]>?

    var ends: LIRSEnds {
        @inline(__always) unsafeAddress { UnsafePointer(endsStorage) }
        @inline(__always) nonmutating unsafeMutableAddress { endsStorage }
    }

    @inline(__always) func size(_ id: Int32) -> UInt64 { nodes[Int(id)].size }
    @inline(__always) func inStack(_ id: Int32) -> Bool { nodes[Int(id)].inStack }
    @inline(__always) func list(_ id: Int32) -> UInt8 { nodes[Int(id)].list }
    @inline(__always) func isLIR(_ id: Int32) -> Bool { nodes[Int(id)].inStack && nodes[Int(id)].list == Self.noList }

    // MARK: stack S

    @inline(__always)
    mutating func pushTop(_ id: Int32) {
        let oldTop = ends.top
        nodes[Int(id)].up = LIRSNode.nil32
        nodes[Int(id)].down = oldTop
        nodes[Int(id)].inStack = true
        if oldTop >= 0 { nodes[Int(oldTop)].up = id } else { ends.bottom = id }
        ends.top = id
        ends.stackWeight += size(id)
    }

    @inline(__always)
    mutating func removeFromStack(_ id: Int32) {
        departed?.pointee.append(UInt32(id))
        unlinkFromStack(id)
    }

    @inline(__always)
    mutating func moveToTop(_ id: Int32) {
        if nodes[Int(id)].inStack {
            if ends.top == id { return }
            unlinkFromStack(id)
        }
        pushTop(id)
    }

    /// Takes `id` out of S without noting a departure (it goes back on top at once).
    @inline(__always)
    private mutating func unlinkFromStack(_ id: Int32) {
        let up = nodes[Int(id)].up
        let down = nodes[Int(id)].down
        if up >= 0 { nodes[Int(up)].down = down } else { ends.top = down }
        if down >= 0 { nodes[Int(down)].up = up } else { ends.bottom = up }
        nodes[Int(id)].inStack = false
        ends.stackWeight -= size(id)
    }

    // MARK: Q and the non-resident list

    @inline(__always)
    mutating func pushHead(_ id: Int32, _ list: UInt8) {
        let oldHead = list == Self.q ? ends.qHead : ends.nonResidentHead
        nodes[Int(id)].newer = LIRSNode.nil32
        nodes[Int(id)].older = oldHead
        nodes[Int(id)].list = list
        if oldHead >= 0 { nodes[Int(oldHead)].newer = id } else { setTail(list, id) }
        if list == Self.q {
            ends.qHead = id
            ends.qWeight += size(id)
        } else {
            ends.nonResidentHead = id
            ends.nonResidentWeight += size(id)
        }
    }

    @inline(__always)
    mutating func removeFromList(_ id: Int32) {
        let list = nodes[Int(id)].list
        guard list != Self.noList else { return }
        departed?.pointee.append(UInt32(id))
        let newer = nodes[Int(id)].newer
        let older = nodes[Int(id)].older
        if newer >= 0 { nodes[Int(newer)].older = older } else { setHead(list, older) }
        if older >= 0 { nodes[Int(older)].newer = newer } else { setTail(list, newer) }
        nodes[Int(id)].list = Self.noList
        if list == Self.q { ends.qWeight -= size(id) } else { ends.nonResidentWeight -= size(id) }
    }

    /// Removes and returns the oldest entry of `list`.
    @inline(__always)
    mutating func popTail(_ list: UInt8) -> Int32? {
        let tail = list == Self.q ? ends.qTail : ends.nonResidentTail
        guard tail >= 0 else { return nil }
        removeFromList(tail)
        return tail
    }

    @inline(__always)
    private mutating func setHead(_ list: UInt8, _ id: Int32) {
        if list == Self.q { ends.qHead = id } else { ends.nonResidentHead = id }
    }

    @inline(__always)
    private mutating func setTail(_ list: UInt8, _ id: Int32) {
        if list == Self.q { ends.qTail = id } else { ends.nonResidentTail = id }
    }
}
