import NIOCore

/// A `TaskExecutor` that runs jobs on one SwiftNIO event loop's thread.
///
/// A task that prefers it (`withTaskExecutorPreference`) sends its Redis commands from the thread
/// that owns their connection, and its continuation is resumed there when the reply arrives: the
/// command is queued without waking another thread, and the reply reaches the task without one
/// either. Without it, each command costs two wake-ups, one of the event loop to write the command
/// and one of a thread of Swift's concurrency pool to run the task again — on a small machine the
/// larger part of a round trip on loopback (see ``RedisTier/withEventLoopAffinity(isolation:_:)``).
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // From the loop's own thread this only appends to its task queue; from elsewhere it wakes
        // the loop once.
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
