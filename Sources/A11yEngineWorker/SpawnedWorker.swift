// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore
import NIOPosix

/// Starts the worker `WorkerLink.launch` describes (`WorkerProcess.start`), on the link's loop
/// thread, and makes a11yd's end of its socket pair a NIO channel on that loop, framed by
/// `WorkerFrameDecoder` and `WorkerFrameEncoder` (the codec the worker side uses too).
struct ProcessStarter: WorkerStarter {
    func start(for link: WorkerLink) throws(WorkerFailure) -> any LinkedWorker {
        let launch = link.launch
        let (process, descriptor) = try WorkerProcess.start(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment, engine: launch.engine.rawValue,
            logger: link.logger)
        let worker = SpawnedWorker(process: process, loop: link.loop)
        ClientBootstrap(group: link.loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(WorkerFrameDecoder()), MessageToByteHandler(WorkerFrameEncoder()),
                        WorkerChannelHandler(link: link, worker: worker))
                }
            }
            .withConnectedSocket(descriptor)
            .whenFailure { error in link.channelClosed(worker, why: "its channel cannot be read (\(error))") }
        return worker
    }
}

/// A worker process and its channel, on the link's loop.
final class SpawnedWorker: LinkedWorker {
    let process: WorkerProcess
    private let loop: any EventLoop
    /// Set once the channel is made; nil again once it is closed.
    private let channel: NIOLoopBoundBox<(any Channel)?>

    init(process: WorkerProcess, loop: any EventLoop) {
        self.process = process
        self.loop = loop
        channel = .makeBoxSendingValue(nil, eventLoop: loop)
    }

    var pid: Int32 { process.pid }

    func attach(_ channel: any Channel) {
        self.channel.value = channel
    }

    func send(_ message: WorkerMessage) {
        channel.value?.writeAndFlush(message, promise: nil)
    }

    func cpuTime() -> Duration? { process.cpuTime() }

    func waitsForTheMachine() -> Bool { process.waitsForTheMachine() }

    func end(kill: Bool) -> EventLoopFuture<String> {
        channel.value?.close(promise: nil)
        channel.value = nil
        let process = process
        return NIOThreadPool.singleton.runIfActive(eventLoop: loop) { process.wait(killing: kill) }
    }
}

/// Hands what the worker sends to the link, and the end of its channel: closed (the worker died),
/// or carrying what cannot be (the decoder refused it).
final class WorkerChannelHandler: ChannelInboundHandler {
    typealias InboundIn = WorkerMessage

    private let link: WorkerLink
    private let worker: SpawnedWorker

    init(link: WorkerLink, worker: SpawnedWorker) {
        self.link = link
        self.worker = worker
    }

    func handlerAdded(context: ChannelHandlerContext) {
        worker.attach(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        link.received(unwrapInboundIn(data), from: worker)
    }

    func channelInactive(context: ChannelHandlerContext) {
        link.channelClosed(worker, why: "its channel closed")
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        link.channelClosed(worker, why: "it sent a bad message (\(error))")
        context.close(promise: nil)
    }
}
