import NIOCore

/// Runs a task's jobs on one NIO event loop: a connection's task that prefers it
/// (`withTaskExecutorPreference`) resumes where its channel's reads arrive and its writes go, with
/// no wake-up of a thread of the cooperative pool in between.
public final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
