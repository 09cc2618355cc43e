// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CPulse
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The connection to the sound server: one `pa_context` at a time. A context that fails never
/// recovers, so a fresh one is made 150 ms later, for as long as it takes. An attempt the server
/// takes and does not answer (one starting on a swamped machine, a stopped one) is given up after
/// `firstAnswerLimitUsec`, then twice as long each time up to `lastAnswerLimitUsec`: libpulse
/// itself waits 30 s, ten times the grace after which a lost server fails the item.
///
/// Until a first connection, a failed attempt says the server is unreachable, and why (`status`):
/// an item then fails at once rather than wait for a server that was never there. The log says
/// which server and why at warning level, once and again each time the reason changes, and says
/// when a connection is made after that.
///
/// Used only with the mainloop lock held (by the owner, or by libpulse callbacks).
final class ServerConnection {
    enum Event {
        case connected, lost
        /// An attempt failed (`status` says why).
        case attemptFailed
        /// A stream on the server (a sink input) appeared, changed or went.
        case sinkInput(UInt32, SinkInputChange)
    }

    enum SinkInputChange { case new, changed, removed }

    static let reconnectDelayUsec: UInt64 = 150_000
    static let firstAnswerLimitUsec: UInt64 = 1_000_000
    static let lastAnswerLimitUsec: UInt64 = 16_000_000

    private let mainloop: ThreadedMainloop
    private let identity: PlaybackIdentity
    private let server: String?
    /// `server` as libpulse resolves it, to name it and to ask its socket why an attempt failed.
    private let address: SoundServerAddress
    private let logger: Logger
    /// Told when the connection comes up or goes down (lock held).
    var onEvent: (Event) -> Void = { _ in }

    /// The current context, for `PlaybackStream` only.
    private(set) var context: OpaquePointer?
    /// What the context and its streams say they are.
    var playbackIdentity: PlaybackIdentity { identity }
    /// Ready, and the server has said its name (so `rewinds` holds before any stream is made).
    private(set) var isConnected = false
    /// The server is PulseAudio itself, which takes back what its sink mixed ahead when a stream
    /// rewrites it (a rewind); false for any other server: PipeWire's pulse server ("PulseAudio
    /// (on PipeWire …)") has passed what it read on and cannot.
    private(set) var rewinds = false
    private var serverInfoOperation: OpaquePointer?
    private var reconnectTimer: OpaquePointer?
    /// Armed while an attempt waits for the server to answer.
    private var answerTimer: OpaquePointer?
    private var answerLimitUsec = firstAnswerLimitUsec
    private var outageLogged = false
    private var everConnected = false
    private var closed = false
    /// Why the last attempt failed (nil once connected): what the log last said.
    private var failure: SoundServerFailure?
    /// An attempt is under way: until it fails, a server that has just appeared may yet be found.
    private var attemptUnderWay = false

    init(mainloop: ThreadedMainloop, identity: PlaybackIdentity, server: String?, environment: (String) -> String?, logger: Logger) {
        self.mainloop = mainloop
        self.identity = identity
        self.server = server
        self.address = SoundServerAddress(configured: server, environment: environment)
        self.logger = logger
    }

    /// Where the connection stands, for `status`.
    var status: SoundServerStatus {
        if isConnected, let c = context { return SoundServerStatus(server: serverName(c), state: .connected) }
        let state: SoundServerStatus.State = isUnreachable ? .unreachable : .connecting
        return SoundServerStatus(server: address.description, state: state, reason: failure?.description)
    }

    /// No server was ever reached, and the last attempt found nobody there. A server that went
    /// away, or one that took the connection and is slow to answer, is waited for instead (the
    /// item's grace).
    private var isUnreachable: Bool { !isConnected && !everConnected && failure?.findsNobody == true }

    /// Where the connection stands, for an item: an item waits for an attempt under way (it
    /// fails within a millisecond where nobody is there), and fails when it does.
    var playbackConnection: PlaybackProgress.Connection {
        if isConnected { return .connected }
        guard isUnreachable, !attemptUnderWay, let failure else { return .reconnecting }
        return .unreachable(.audioUnavailable("no sound server reachable at \(address) (\(failure))"))
    }

    /// libpulse's state, which can be ahead of `isConnected` inside a callback of a failing context.
    var isReady: Bool { context.map { pa_context_get_state($0) == PA_CONTEXT_READY } ?? false }

    /// The error the context last reported.
    var lastError: PulseError { PulseError(code: context.map { pa_context_errno($0) } ?? Int32(PA_ERR_BADSTATE.rawValue)) }

    // libpulse gets an unretained pointer to `self`: every callback is removed in `close()` (and
    // when a context is released) under the mainloop lock, before `self` can go away.
    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> ServerConnection? {
        userdata.map { Unmanaged<ServerConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    func connect() {
        guard !closed, context == nil else { return }
        let made = identity.withContextProperties(adding: PlaybackStream.pipeWireClientProperties) { properties in
            pa_context_new_with_proplist(mainloop.api, identity.applicationName, properties)
        }
        guard let c = made else {
            logger.error("pa_context_new failed")
            scheduleReconnect()
            return
        }
        context = c
        attemptUnderWay = true
        pa_context_set_state_callback(c, { c, userdata in
            guard let c, let connection = ServerConnection.from(userdata) else { return }
            connection.stateChanged(c)
        }, userdata)
        if pa_context_connect(c, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            // May already have gone FAILED through the callback; scheduling is idempotent.
            attemptFailed(explaining: lastError)
            scheduleReconnect()
        } else if context == c, awaitsAnswer(c) {
            awaitAnswer()
        }
    }

    /// Connecting, authorizing or naming itself, or ready and not yet told the server's name:
    /// neither connected nor failed.
    private func awaitsAnswer(_ c: OpaquePointer) -> Bool {
        let state = pa_context_get_state(c)
        return !isConnected && state != PA_CONTEXT_FAILED && state != PA_CONTEXT_TERMINATED
    }

    private func awaitAnswer() {
        mainloop.cancel(&answerTimer)
        answerTimer = mainloop.timer(afterUsec: answerLimitUsec, userdata: userdata) { _, _, _, userdata in
            ServerConnection.from(userdata)?.noAnswer()
        }
    }

    /// The attempt got no answer in time: given up, and the next one given longer (a server that
    /// is only slow answers one of them).
    private func noAnswer() {
        mainloop.cancel(&answerTimer)
        guard !closed, let c = context, awaitsAnswer(c) else { return }
        logger.debug("the sound server did not answer", metadata: ["waited_ms": "\(answerLimitUsec / 1000)"])
        answerLimitUsec = min(answerLimitUsec * 2, Self.lastAnswerLimitUsec)
        noteFailure(.noAnswer)
        releaseContext()
        connect()
    }

    /// Something wants to play while no server is reached: the next attempt is made now rather
    /// than when the retry timer says, so that a server that has just appeared is found before
    /// the item is told that none is there.
    func attemptNow() {
        guard !closed, !isConnected, reconnectTimer != nil else { return }
        mainloop.cancel(&reconnectTimer)
        releaseContext()
        connect()
    }

    /// Ends the connection for good.
    func close() {
        closed = true
        mainloop.cancel(&reconnectTimer)
        mainloop.cancel(&answerTimer)
        releaseContext()
    }

    private func stateChanged(_ c: OpaquePointer) {
        guard c == context, !closed else { return }
        let state = pa_context_get_state(c)
        if state == PA_CONTEXT_READY {
            // Connected once the server has said its name (the answer timer runs on until then):
            // how a stream is asked for depends on it.
            askServerName(c)
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            mainloop.cancel(&answerTimer)
            let reason = lastError
            if isConnected {
                logger.warning("lost the sound server; reconnecting", metadata: [
                    "server": "\(serverName(c))", "reason": "\(reason)",
                ])
                outageLogged = true
                lose()
            } else {
                attemptFailed(explaining: reason)
            }
            scheduleReconnect()
        }
    }

    /// Asks the server's name, to know whether it rewinds (`rewinds`), then is connected. Without an
    /// answer (the context failed meanwhile) nothing: the failure is handled as an attempt's.
    private func askServerName(_ c: OpaquePointer) {
        cancelServerInfo()
        serverInfoOperation = pa_context_get_server_info(c, { c, info, userdata in
            guard let connection = ServerConnection.from(userdata) else { return }
            // Done: only our reference is let go (libpulse holds its own until this returns).
            if let operation = connection.serverInfoOperation { pa_operation_unref(operation) }
            connection.serverInfoOperation = nil
            guard let c, c == connection.context, !connection.closed else { return }
            // The name is a C string of the server's: compared, never trusted to be anything.
            let name = info?.pointee.server_name.map { String(cString: $0) }
            connection.becameConnected(c, rewinds: name == "pulseaudio")
        }, userdata)
        // libpulse could not even send the question: connected all the same, as to a server that
        // does not rewind (the safe assumption for a cut).
        if serverInfoOperation == nil { becameConnected(c, rewinds: false) }
    }

    private func becameConnected(_ c: OpaquePointer, rewinds: Bool) {
        mainloop.cancel(&answerTimer)
        answerLimitUsec = Self.firstAnswerLimitUsec
        self.rewinds = rewinds
        isConnected = true
        attemptUnderWay = false
        let name = serverName(c)
        let metadata: Logger.Metadata = ["server": "\(name)", "rewinds": "\(rewinds)"]
        if everConnected || outageLogged {
            logger.info("connected to the sound server at \(name)", metadata: metadata)
        } else {
            logger.debug("connected to the sound server at \(name)", metadata: metadata)
        }
        everConnected = true
        outageLogged = false
        failure = nil
        // Every stream's comings and goings, for the ducker and for a11yd's own streams' volume.
        pa_context_set_subscribe_callback(c, { c, event, index, userdata in
            guard let connection = ServerConnection.from(userdata), c == connection.context, !connection.closed else { return }
            let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
            let change: SinkInputChange = switch type {
            case PA_SUBSCRIPTION_EVENT_NEW.rawValue: .new
            case PA_SUBSCRIPTION_EVENT_REMOVE.rawValue: .removed
            default: .changed
            }
            connection.onEvent(.sinkInput(index, change))
        }, userdata)
        if let operation = pa_context_subscribe(c, PA_SUBSCRIPTION_MASK_SINK_INPUT, nil, nil) { pa_operation_unref(operation) }
        onEvent(.connected)
    }

    private func cancelServerInfo() {
        guard let operation = serverInfoOperation else { return }
        pa_operation_cancel(operation)
        pa_operation_unref(operation)
        serverInfoOperation = nil
    }

    private func lose() {
        guard isConnected else { return }
        isConnected = false
        rewinds = false
        if !closed { onEvent(.lost) }
    }

    private func serverName(_ c: OpaquePointer) -> String {
        if let s = pa_context_get_server(c) { return String(cString: s) }
        return address.description
    }

    /// An attempt failed with libpulse's `error`: for a local socket that libpulse only says
    /// refused, the socket is asked why.
    private func attemptFailed(explaining error: PulseError) {
        let refused = error.code == Int32(PA_ERR_CONNECTIONREFUSED.rawValue)
        let socket = refused ? address.socketPath.map(SoundServerFailure.SocketState.probe) : nil
        noteFailure(SoundServerFailure(code: error.code, socket: socket))
    }

    /// Logged at warning level when the reason is new (the first failure, or another than the
    /// last one), else at trace: a server that stays away, tried every 150 ms, is one line.
    private func noteFailure(_ reason: SoundServerFailure) {
        outageLogged = true
        attemptUnderWay = false
        defer { onEvent(.attemptFailed) }
        guard reason != failure else {
            logger.trace("sound server still unreachable", metadata: ["reason": "\(reason)"])
            return
        }
        failure = reason
        let wording = everConnected ? "the sound server is still unreachable at" : "no sound server reachable at"
        logger.warning("\(wording) \(address) (\(reason)); trying again")
    }

    private func scheduleReconnect() {
        guard !closed, reconnectTimer == nil else { return }
        reconnectTimer = mainloop.timer(afterUsec: Self.reconnectDelayUsec, userdata: userdata) { _, _, _, userdata in
            ServerConnection.from(userdata)?.reconnectTimerFired()
        }
    }

    private func reconnectTimerFired() {
        mainloop.cancel(&reconnectTimer)
        guard !closed else { return }
        releaseContext()
        connect()
    }

    /// Forgets the current context (never from inside its own state callback).
    private func releaseContext() {
        cancelServerInfo()
        lose()
        if let c = context {
            pa_context_set_state_callback(c, nil, nil)
            pa_context_set_subscribe_callback(c, nil, nil)
            pa_context_disconnect(c)
            pa_context_unref(c)
            context = nil
        }
    }
}
