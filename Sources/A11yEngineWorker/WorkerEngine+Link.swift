// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Glibc
import Logging

/// The link thread: it sleeps until a request comes or the idle worker stirs, serves requests one
/// at a time on the worker `WorkerSupervision` routes them to, and starts, retires and ends workers
/// as it says.
extension WorkerEngine {
    /// Serves until `shutDown()`; the thread then ends, and with it (PR_SET_PDEATHSIG) any worker.
    func serve() {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let shutDown = link.withLock { link -> (worker: WorkerProcess?, left: [Work])? in
                guard link.supervision.isShutDown else { return nil }
                defer { link.work.removeAll() }
                return (link.supervision.workerToEndAfterShutDown(), link.work)
            }
            if let shutDown {
                for work in shutDown.left { work.fail(shutDownError) }
                if let worker = shutDown.worker { _ = worker.reap() }
                return
            }
            // Asleep until a request comes or the idle worker's channel stirs (it can only die), or
            // until the idle worker has been idle long enough to be ended (`launch.idleLimit`).
            let idle = link.withLock { $0.work.isEmpty ? $0.supervision.worker : nil }
            var watched = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: idle?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
            let timeout = idle == nil ? -1 : launch.idleLimit.map { WorkerProcess.milliseconds($0) } ?? -1
            let woken = poll(&watched, 2, timeout)
            if woken < 0 { continue }
            if woken == 0, idle != nil {
                if let retired = link.withLock({ $0.supervision.idleLimitReached() }) {
                    let ending = retired.reap()
                    logger.info(
                        "the \(launch.engine.rawValue) worker ended after \(launch.idleLimit!) idle, to give its memory back; the next request starts another",
                        metadata: ["pid": "\(retired.pid)", "ending": "\(ending)"])
                }
                continue
            }
            if watched[1].revents != 0, let dead = link.withLock({ $0.supervision.diedWhileIdle() }) {
                let ending = dead.end()
                logger.error("the \(launch.engine.rawValue) worker ended while idle; \(ending); starting a new one", metadata: ["pid": "\(dead.pid)"])
                startWorker()
            }
            if watched[0].revents != 0 { _ = read(wake.read, &drain, drain.count) }
            while let work = link.withLock({ $0.work.isEmpty ? nil : $0.work.removeFirst() }) {
                run(work)
            }
        }
    }

    /// How one attempt at a request ended on its worker.
    enum Attempt {
        case done
        /// The worker failed: `what` happened; whether the request may be blamed (a worker that
        /// breaks the protocol is at fault alone); whether the worker had sent anything of the
        /// request yet; whether its channel closed (it died), rather than its falling silent.
        case workerFailed(what: String, blame: Bool, sentAnything: Bool, died: Bool)
    }

    /// What every request, synthesis or question, goes through: refused if it keeps killing
    /// workers, else served where `WorkerSupervision` routes it (the worker, started first if there
    /// is none; the in-process engine; or nowhere, with why), and tried once more on a new worker
    /// if the first died before sending anything of it: a worker killed while idle, or just as the
    /// request came, is not the request's fault (it would end `error`, unheard). A
    /// request whose worker died twice, or after answering part of it, or fell silent, fails; the
    /// worker's failure counts against it (`WorkerSupervision.refusalThreshold`), and a new worker is started for
    /// the next.
    func run(_ work: Work) {
        if case .synthesis(let job) = work, job.cancellation.isCancelled {
            job.sink.finish()
            return
        }
        let key = work.fingerprint
        if let failures = link.withLock({ $0.supervision.refusal(of: key) }) {
            work.fail(work.refused(after: failures))
            return
        }
        var round = 1
        while true {
            switch link.withLock({ $0.supervision.route(now: .now) }) {
            case .start:
                // Then routed again: to the new worker, in process, or failed with the reason.
                startWorker()
            case .inProcess:
                doInProcess(work)
                return
            case .fail(let why):
                work.fail(work.failed(why))
                return
            case .shuttingDown:
                work.fail(shutDownError)
                return
            case .worker(let worker):
                let id = link.withLock { $0.takeID() }
                let attempt = switch work {
                case .synthesis(let job): say(job, id: id, on: worker)
                case .question(let question): answer(question, id: id, on: worker)
                }
                switch attempt {
                case .done:
                    link.withLock { $0.supervision.succeeded(key, round: round) }
                    return
                case .workerFailed(let what, let blame, let sentAnything, let died):
                    let ending = worker.end()
                    let (failures, next) = link.withLock {
                        $0.supervision.workerFailed(under: key, blamed: blame, round: round, died: died, sentAnything: sentAnything)
                    }
                    logger.error(
                        "the \(launch.engine.rawValue) worker \(what) while \(work.doing); \(ending)",
                        metadata: ["pid": "\(worker.pid)", "failures_of_this_request": "\(failures)"])
                    switch next {
                    case .tryAgain:
                        logger.notice("trying the request again on a new worker: its worker died before sending anything of it")
                        round += 1
                    case .failAndStartAnother:
                        work.fail(work.failed("its worker \(what); \(ending)"))
                        // Started now, so that the next request finds it ready.
                        startWorker()
                        return
                    }
                }
            }
        }
    }

    private func say(_ job: Job, id: UInt32, on worker: WorkerProcess) -> Attempt {
        link.withLock { $0.active = (id, job.cancellation) }
        defer { link.withLock { $0.active = nil } }
        if let why = worker.send(.synthesize(id: id, job.request), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        // A consumer that left while the request was being sent could not send its cancel.
        if job.cancellation.isCancelled, let why = worker.send(.cancel(id: id), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        var sentAnything = false
        while true {
            switch worker.receive(timeout: launch.hangLimit) {
            case .message(.chunk(let chunkID, let chunk)) where chunkID == id:
                sentAnything = true
                if !job.cancellation.isCancelled { job.sink.yield(chunk) }
            case .message(.end(let endID, let failure)) where endID == id:
                if let failure { job.sink.finish(throwing: failure) } else { job.sink.finish() }
                return .done
            case .message(let other):
                logger.warning("engine worker sent an unexpected message; replacing it", metadata: ["message": "\(Self.kind(of: other))"])
                return .workerFailed(what: "broke its protocol", blame: false, sentAnything: true, died: false)
            case .silent:
                return .workerFailed(what: "stopped responding (nothing for \(launch.hangLimit))", blame: true, sentAnything: sentAnything, died: false)
            case .broken(let why):
                return .workerFailed(what: "failed: \(why)", blame: true, sentAnything: sentAnything, died: true)
            }
        }
    }

    private func answer(_ question: Question, id: UInt32, on worker: WorkerProcess) -> Attempt {
        if let why = worker.send(.ask(id: id, question.question), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        switch worker.receive(timeout: launch.hangLimit) {
        case .message(.answer(let answerID, let answer)) where answerID == id && answer.kind == question.question.expects:
            question.reply(.success(answer))
        case .message(.end(let endID, let failure?)) where endID == id:
            question.reply(.failure(failure))
        case .message(let other):
            logger.warning("engine worker sent an unexpected message; replacing it", metadata: ["message": "\(Self.kind(of: other))"])
            return .workerFailed(what: "broke its protocol", blame: false, sentAnything: true, died: false)
        case .silent:
            return .workerFailed(what: "stopped responding (nothing for \(launch.hangLimit))", blame: true, sentAnything: false, died: false)
        case .broken(let why):
            return .workerFailed(what: "failed: \(why)", blame: true, sentAnything: false, died: true)
        }
        return .done
    }

    /// Starts a worker where `WorkerSupervision` calls for one (none, or the pause after failed
    /// starts is over), trying `startAttempts` times. When none starts, the supervision decides: in
    /// process (the requests waiting go there too, and the log says so), or failing requests for
    /// `WorkerSupervision.restartPause` with the reason.
    func startWorker() {
        guard case .start = link.withLock({ $0.supervision.route(now: .now) }) else { return }
        var last = ""
        for attempt in 1...Self.startAttempts {
            do {
                let (worker, sampleRate) = try Self.startWorker(launch, logger: logger)
                guard sampleRate == format.sampleRate else {
                    _ = worker.end()
                    throw WorkerFailure("its sample rate is \(sampleRate), not \(format.sampleRate)")
                }
                link.withLock { $0.supervision.started(worker) }
                return
            } catch {
                last = "\(error)"
                logger.error("a \(launch.engine.rawValue) worker could not start", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        }
        enum Outcome { case failing(String), inProcess(waiting: [Work]), shutDown }
        let outcome = link.withLock { link -> Outcome in
            if let reason = link.supervision.startFailed(engine: launch.engine.rawValue, why: last, now: .now) { return .failing(reason) }
            guard case .inProcess = link.supervision.state else { return .shutDown }
            defer { link.work.removeAll() }
            return .inProcess(waiting: link.work)
        }
        switch outcome {
        case .failing(let reason):
            logger.critical("\(reason)")
        case .inProcess(let waiting):
            logger.critical("no engine worker can start: speaking with the in-process engine, unprotected from what text does to eSpeak")
            for work in waiting { doInProcess(work) }
        case .shutDown:
            break
        }
    }

    /// Starts a worker and waits (at most `launch.readyLimit`) for its `ready`; logs what protects it.
    static func startWorker(_ launch: WorkerLaunch, logger: Logger) throws(WorkerFailure) -> (WorkerProcess, Int) {
        let worker = try WorkerProcess.start(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment, engine: launch.engine.rawValue,
            logger: logger)
        switch worker.receive(timeout: launch.readyLimit) {
        case .message(.ready(let sampleRate, let protection)):
            let level: Logger.Level = protection.contains("no ") ? .notice : .info
            logger.log(level: level, "\(launch.engine.rawValue) engine worker ready", metadata: ["pid": "\(worker.pid)", "protection": "\(protection)"])
            return (worker, sampleRate)
        case .message(let other):
            let ending = worker.end()
            throw WorkerFailure("it sent \(kind(of: other)) before ready; \(ending)")
        case .silent:
            let ending = worker.end()
            throw WorkerFailure("it was not ready within \(launch.readyLimit); \(ending)")
        case .broken(let why):
            let ending = worker.end()
            throw WorkerFailure("\(why); \(ending)")
        }
    }
}
