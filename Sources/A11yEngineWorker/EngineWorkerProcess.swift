// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import A11ySystem
import CSeccomp
import Glibc
import Logging
import NIOCore
import Synchronization
import SystemPackage

/// The engine worker: what `a11yd --engine-worker` runs instead of the daemon. It holds
/// libespeak-ng and nothing else of a11yd's (no client socket, no sound server), takes requests on
/// descriptor 0 (one end of a socket pair a11yd made) and answers on the same descriptor.
///
/// Before it reads any request it shuts itself in (docs/reliability.md, "The engine worker"):
/// 1. `no_new_privs` and Landlock: it may read eSpeak's data folder and nothing else, write nothing;
///    on the main thread before eSpeak's thread starts, which inherits it;
/// 2. eSpeak loaded (its data read, its thread started);
/// 3. the seccomp filter (`SyscallFilter`) on both threads.
/// A protection the kernel refuses is reported in `ready` and a11yd logs it; the worker still serves.
public enum EngineWorkerProcess {
    /// The channel to a11yd.
    static let channel: Int32 = 0
    /// What ps and /proc/PID/comm call a worker (at most 15 bytes).
    public static let processName = "a11yd-worker"

    /// Serves a11yd until it closes the channel (or dies: the worker then gets SIGKILL).
    public static func run(dataFolder: String?) -> Never {
        let protection = shutIn(dataFolder: dataFolder)
        guard let engine = protection.engine else {
            report("cannot start eSpeak-NG: \(protection.summary)")
            exit(1)
        }
        send(.ready(sampleRate: engine.format.sampleRate, protection: protection.summary))
        serve(engine)
    }

    /// The same sandbox as `run`, then tries what it must forbid and prints what happened, one line
    /// each on stdout ("write-file EACCES"), for tests and for anyone checking a kernel.
    public static func probe(dataFolder: String?, writing path: String) -> Never {
        let protection = shutIn(dataFolder: dataFolder)
        var lines = ["protection \(protection.summary)"]
        func outcome(_ result: Int32) -> String { result >= 0 ? "allowed" : "refused \(errnoName(errno))" }
        let file = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        lines.append("write-file \(outcome(file))")
        let unixSocket = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        lines.append("unix-socket \(outcome(unixSocket))")
        let inetSocket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        lines.append("inet-socket \(outcome(inetSocket))")
        let outside = open("/etc/passwd", O_RDONLY | O_CLOEXEC)
        lines.append("read-outside-data \(outcome(outside))")
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        let executed = execve("/bin/true", &argv, [nil])
        lines.append("exec \(outcome(executed))")
        let forked = fork()
        if forked == 0 { _exit(0) }
        lines.append("fork \(outcome(forked))")
        if let engine = protection.engine {
            // Synthesis still works inside all that.
            let done = Atomic<Int>(0)
            let finished = Mutex<(Bool, String)>((false, ""))
            engine.synthesize(
                Utterance(segments: [SpeechSegment(content: .text("bonjour"), voice: "fr", sourceStart: 0, sourceLength: 7)], rate: 175, pitch: 50, volume: 100),
                into: SynthesisSink(
                    yield: { chunk in done.add(chunk.samples.count, ordering: .relaxed) },
                    finish: { error in finished.withLock { $0 = (true, error.map { "\($0)" } ?? "") } }),
                cancellation: CancellationFlag())
            while !finished.withLock({ $0.0 }) { usleep(1000) }
            let failure = finished.withLock { $0.1 }
            lines.append("synthesis " + (failure.isEmpty && done.load(ordering: .relaxed) > 0 ? "works" : "fails \(failure)"))
        }
        let text = lines.joined(separator: "\n") + "\n"
        _ = text.withCString { write(1, $0, strlen($0)) }
        exit(0)
    }

    struct Protection {
        var engine: EspeakEngine?
        var summary: String
    }

    /// Steps 1 to 3 above; the engine, and what is in force in words.
    static func shutIn(dataFolder: String?) -> Protection {
        // Nothing a11yd had open is ours (its sockets, should one leak through), and we go with it.
        a11y_close_from(3)
        // a11yd's log moves to descriptor 3 (`report`), and stderr goes to /dev/null: libespeak-ng's
        // audio library loads libpulse even for synchronous output, and libpulse complains on stderr
        // about every folder the sandbox refuses it.
        if dup2(2, diagnostics) == diagnostics {
            let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
            if null >= 0 {
                dup2(null, 2)
                close(null)
            }
        }
        _ = a11y_die_with_parent()
        // Its name in ps, top and /proc/PID/comm (eSpeak's thread, started later, inherits it).
        _ = a11y_set_thread_name(processName)
        var summary: [String] = []
        // Unless a11yd named one: where eSpeak's data is, found before the sandbox (nothing read yet).
        let dataFolder = dataFolder ?? EspeakEngine.installedDataFolder()
        if let dataFolder {
            // The C library's compiled locales too: eSpeak sets LC_CTYPE to C.UTF-8, as in a11yd.
            switch Landlock.restrictThisThread(to: [Landlock.Rule(dataFolder, .read), Landlock.Rule("/usr/lib/locale", .read)]) {
            case .restricted(let abi): summary.append("landlock (ABI \(abi), reads only \(dataFolder) and /usr/lib/locale)")
            case .unavailable(let why): summary.append("no landlock (\(why))")
            }
        } else {
            summary.append("no landlock (no data folder named)")
        }
        let engine: EspeakEngine
        do {
            // The data folder a11yd's eSpeak uses (its parent is what espeak_Initialize takes: the
            // worker has none of a11yd's environment, ESPEAK_DATA_PATH included); a logger that
            // writes nowhere (stdout and stderr are /dev/null).
            engine = try EspeakEngine(
                dataPath: dataFolder.map { FilePath($0).folder.string },
                logger: Logger(label: "a11yd.engine-worker", factory: { _ in SwiftLogNoOpLogHandler() }))
        } catch {
            return Protection(engine: nil, summary: "\(error)")
        }
        // Landlock set it; the filter sets it too, and forbids asking afterwards.
        let noNewPrivileges = a11y_no_new_privs() == 1 || SyscallFilter.setNoNewPrivileges()
        if let refused = SyscallFilter.install() {
            summary.append("no seccomp (\(refused))")
        } else {
            summary.append("seccomp")
        }
        summary.append(noNewPrivileges ? "no_new_privs" : "new privileges possible")
        return Protection(engine: engine, summary: summary.joined(separator: ", "))
    }

    /// The main thread reads requests; eSpeak's thread says them and writes the answers, so that a
    /// `cancel` is read while a long utterance is being said.
    private static func serve(_ engine: EspeakEngine) -> Never {
        let current = Mutex<(id: UInt32, flag: CancellationFlag)?>(nil)
        // a11yd's own decoder, driven by hand: the sandbox allows no thread for an event loop.
        let decoder = NIOSingleStepByteToMessageProcessor(WorkerFrameDecoder())
        var buffer = ByteBuffer()
        while true {
            buffer.clear(minimumCapacity: readSize)
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: readSize) { space in
                (try? SystemCall.retryingOnInterrupt { read(channel, space.baseAddress, space.count) }) ?? 0
            }
            // a11yd closed its end (or is gone): nothing more to say.
            guard count > 0 else { exit(0) }
            do {
                try decoder.process(buffer: buffer) { message in
                    switch message {
                    case .synthesize(let id, let utterance):
                        let flag = CancellationFlag()
                        current.withLock { $0 = (id, flag) }
                        engine.synthesize(
                            utterance,
                            into: SynthesisSink(
                                yield: { chunk in send(.chunk(id: id, chunk)) },
                                finish: { error in
                                    let failure = error.map { ($0 as? SpeechError) ?? SpeechError(.engineFailed, "\($0)") }
                                    send(.end(id: id, failure: failure))
                                }),
                            cancellation: flag)
                    case .cancel(let id):
                        current.withLock { if let active = $0, active.id == id { active.flag.cancel() } }
                    case .ask(let id, let question):
                        // a11yd asks only between syntheses, and nothing is cancelled meanwhile: this
                        // thread may wait for eSpeak's (the sandbox allows no other thread to answer).
                        do {
                            send(.answer(id: id, try engine.answerWaiting(question)))
                        } catch {
                            send(.end(id: id, failure: (error as? SpeechError) ?? SpeechError(.engineFailed, "\(error)")))
                        }
                    case .ready, .chunk, .end, .answer:
                        throw WorkerProtocolError("a11yd sent a worker's message")
                    }
                }
            } catch {
                report("bad request from a11yd: \(error)")
                exit(2)
            }
        }
    }

    /// The most one read takes from the channel.
    static let readSize = 64 * 1024

    /// Writes one message whole; if a11yd is gone there is no one to serve.
    static func send(_ message: WorkerMessage) {
        var frame = WorkerFrame.encode(message)
        while frame.readableBytes > 0 {
            let sent = (try? SystemCall.retryingOnInterrupt {
                frame.withUnsafeReadableBytes { Glibc.send(channel, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            }) ?? 0
            guard sent > 0 else { exit(0) }
            frame.moveReaderIndex(forwardBy: sent)
        }
    }

    /// The pipe a11yd reads into its log (its descriptor 2, moved here), for `report`.
    static let diagnostics: Int32 = 3

    static func report(_ text: String) {
        let line = "a11yd engine worker: \(text)\n"
        _ = line.withCString { write(diagnostics, $0, strlen($0)) }
    }

    static func errnoName(_ code: Int32) -> String {
        switch code {
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        case ENOSYS: "ENOSYS"
        default: "errno \(code)"
        }
    }
}
