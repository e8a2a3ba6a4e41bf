import NIOCore
import NIOPosix

/// The event loops of one group, to tell whether the calling thread is one of them (a task that
/// prefers an ``EventLoopTaskExecutor`` of the group runs there). Listed once: listing a group's
/// loops makes an array each time.
struct EventLoopMembership: Sendable {
    private let loops: Set<ObjectIdentifier>

    init(_ group: any EventLoopGroup) {
        loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
    }

    /// The group's event loop the caller runs on, if any.
    var callersLoop: (any EventLoop)? {
        guard let current = MultiThreadedEventLoopGroup.currentEventLoop, loops.contains(ObjectIdentifier(current))
        else {
            return nil
        }
        return current
    }
}
