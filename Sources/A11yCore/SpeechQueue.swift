// SPDX-License-Identifier: GPL-3.0-or-later
import DequeModule

/// The VoiceOver rules, as a pure state machine.
///
/// It decides what speaks, what waits, what is cut and what is thrown away, and says so as a list
/// of `Effect`s; it never touches audio itself. Every item it accepts leaves it through exactly one
/// `.finished` event. The rules are written out in docs/semantics.md.
public struct SpeechQueue: Sendable {
    /// What the caller must do after a transition, in order.
    public enum Effect: Sendable, Equatable {
        /// Start playing this item (it is now `current`).
        case play(SpeechItem)
        /// Cut the current item's audio; report back with `playbackEnded`.
        case cancelPlayback(UtteranceID)
        /// Pause the current item's audio at this boundary; for `.word` report back with `playbackPaused`.
        case pausePlayback(UtteranceID, PauseBoundary)
        /// Continue the current item's audio where it stopped (also cancels a pending word pause).
        case resumePlayback(UtteranceID)
        /// Tell clients: the event, with the client whose item it is about (`ClientEvent`).
        case emit(ClientEvent)
    }

    /// How playback of an item ended, as the player reports it.
    public enum PlaybackOutcome: Sendable, Equatable {
        case completed
        case cancelled
        case failed(SpeechError)
    }

    public enum CurrentPhase: Sendable, Equatable {
        case speaking
        /// Asked to pause at the next word boundary; audio is still running.
        case pausingAtWord
        case paused
        /// Audio is being cut; the item ends with this reason once playback reports back.
        case stopping(FinishReason)
        /// Its client paused it on its own (SSIP's `PAUSE self`): audio is being cut, and once
        /// playback reports back the rest of the item waits, held, to go on from its last word heard.
        case parking

        /// Its audio is still meant to be heard (not being cut).
        var isKept: Bool {
            switch self {
            case .speaking, .pausingAtWord, .paused: true
            case .stopping, .parking: false
            }
        }
    }

    public struct Current: Sendable, Equatable {
        public var item: SpeechItem
        public var phase: CurrentPhase
        /// Where the last word heard starts, in Unicode scalars of the item's text: where the item
        /// goes on from if its client pauses it. Nil before the first word.
        public var lastWordStart: Int? = nil
        /// Whether `started` (or `resumed`) was told: once its sound began, not when it was chosen
        /// (a natural voice may take a second to load; nothing may say it speaks before it does).
        public var toldStarted = false
    }

    public enum State: Sendable, Equatable, CaseIterable {
        case idle, speaking, paused
    }

    public private(set) var current: Current?
    public private(set) var pending: Deque<SpeechItem> = []
    /// Set by `pause` and cleared by `resume` or `stop`: while set nothing new starts.
    public private(set) var isPaused = false
    /// Clients paused on their own (SSIP's `PAUSE self`): their items wait, others' go on.
    public private(set) var heldClients: Set<ClientID> = []
    /// Most bytes the waiting items may hold (`SpeechItem.queueCost`); beyond it the
    /// lowest-priority oldest waiting items are dropped.
    public var pendingByteLimit: Int
    /// What the waiting items hold now, by `SpeechItem.queueCost`.
    public private(set) var pendingBytes = 0
    /// How many waiting items have each SSIP priority. Derived from `pending` (changed only where
    /// `pendingBytes` is), it spares each SSIP post a pass over every waiting item to find none to
    /// make moot: 10,000 queued messages were 50 million such looks.
    private(set) var waitingByMessagePriority: [MessagePriority: Int] = [:]

    /// 16 MiB: tens of thousands of short messages, a thousand times a burst of key echoes.
    public static let defaultPendingByteLimit = 16 << 20

    public init(pendingByteLimit: Int = SpeechQueue.defaultPendingByteLimit) {
        self.pendingByteLimit = max(1, pendingByteLimit)
    }

    public var state: State {
        if isPaused { return .paused }
        if case .paused = current?.phase { return .paused }
        return current == nil ? .idle : .speaking
    }

    // MARK: - Posting

    public mutating func post(_ item: SpeechItem) -> [Effect] {
        if case .speechDispatcher(let priority) = item.urgency { return post(item, as: priority) }
        var effects: [Effect] = []

        // A newer page-scroll position makes an older one moot, pending or speaking.
        if item.kind == .pageScrolled {
            effects += removePending(reason: .flushed) { $0.kind == .pageScrolled }
        }
        // A new screen makes everything said about the old one moot.
        if item.kind == .screenChanged {
            effects += removePending(reason: .flushed) { $0.urgency.queuePriority < item.urgency.queuePriority }
        }

        if let current, !isPaused, case .speaking = current.phase, interrupts(item, current.item) {
            self.current?.phase = .stopping(.interrupted)
            effects.append(.cancelPlayback(current.item.id))
        }

        insert(item)
        effects += startNextIfIdle()
        effects += yieldVoiceIfHeld()
        effects += keepWithinBound()
        return effects
    }

    /// Whether `item`, arriving now, cuts off `speaking`.
    private func interrupts(_ item: SpeechItem, _ speaking: SpeechItem) -> Bool {
        // SSIP promises that an `important` message is never interrupted, whoever posts.
        if speaking.urgency.messagePriority == .important { return false }
        if item.kind == .pageScrolled && speaking.kind == .pageScrolled { return true }
        return !item.urgency.isQueued && speaking.urgency.queuePriority <= item.urgency.queuePriority
    }

    /// speech-dispatcher's rules for its five priorities (docs/semantics.md, "SSIP priorities").
    /// SSIP items wait in arrival order at their VoiceOver priority (`Urgency.isQueued`); these rules decide
    /// what they cut, what they make moot, and when they are themselves thrown away.
    private mutating func post(_ item: SpeechItem, as priority: MessagePriority) -> [Effect] {
        var effects: [Effect] = []
        let held = isPaused || isHeld(item)
        switch priority {
        case .important:
            // Cuts anything but another important one; lower chatter is moot. The newest pending
            // progress item is kept: the last of a series is always spoken.
            effects += removePending(reason: .flushed, ifAnyOf: [.notification])
            effects += interruptCurrent { $0.urgency.messagePriority != .important }
        case .message, .text:
            // Neither cuts `important` nor `message`; both make waiting text and notifications moot
            // (so text keeps only its newest) and cut a speaking one, or a low VoiceOver item.
            let moot: Set<MessagePriority> = [.text, .notification]
            effects += removePending(reason: .flushed, ifAnyOf: moot)
            effects += interruptCurrent {
                $0.urgency.messagePriority.map { moot.contains($0) || $0 == .progress } ?? ($0.urgency.queuePriority < .default)
            }
        case .notification:
            // Anything else, waiting or speaking, wins; a pause drops it. What a paused client
            // holds does not count: one client's pause never silences the others.
            let busy = pending.contains { $0.urgency.messagePriority != .notification && !isHeld($0) }
                || (current.map { $0.phase.isKept && !isHeld($0.item) && $0.item.urgency.messagePriority != .notification } ?? false)
            if held || busy {
                return [finish(item, .dropped, message: held ? Self.droppedWhilePaused : "a notification gives way to any other speech")]
            }
            effects += removePending(reason: .flushed, ifAnyOf: [.notification])
            effects += interruptCurrent { $0.urgency.messagePriority == .notification }
        case .progress:
            // Never cuts another progress item: the newest one waits (replacing any older waiting
            // one), so intermediate steps are dropped and the last is always spoken.
            if held { return [finish(item, .dropped, message: Self.droppedWhilePaused)] }
            effects += removePending(reason: .flushed, ifAnyOf: [.notification, .progress])
            effects += interruptCurrent { $0.urgency.messagePriority == .notification }
        }
        insert(item)
        effects += startNextIfIdle()
        effects += yieldVoiceIfHeld()
        effects += keepWithinBound()
        return effects
    }

    private static let droppedWhilePaused = "notification and progress messages posted during a pause are dropped"

    /// Cuts the speaking item if `shouldCut` says so (never a paused or already stopping one).
    private mutating func interruptCurrent(if shouldCut: (SpeechItem) -> Bool) -> [Effect] {
        guard let current, !isPaused, case .speaking = current.phase, shouldCut(current.item) else { return [] }
        self.current?.phase = .stopping(.interrupted)
        return [.cancelPlayback(current.item.id)]
    }

    private func isHeld(_ item: SpeechItem) -> Bool {
        item.owner.map(heldClients.contains) ?? false
    }

    /// Queued items go behind everything of their priority or above; the others in front of
    /// their priority class, so that they are next.
    private mutating func insert(_ item: SpeechItem) {
        let index: Int
        let priority = item.urgency.queuePriority
        if item.urgency.isQueued {
            index = pending.lastIndex(where: { $0.urgency.queuePriority >= priority }).map { $0 + 1 } ?? 0
        } else {
            index = pending.firstIndex(where: { $0.urgency.queuePriority <= priority }) ?? pending.count
        }
        insertPending(item, at: index)
    }

    /// Drops the lowest-priority oldest waiting items, the newcomer too if it is one, until what
    /// waits holds at most `pendingByteLimit` bytes.
    private mutating func keepWithinBound() -> [Effect] {
        var effects: [Effect] = []
        while pendingBytes > pendingByteLimit, let index = oldestOfTheLowestPriority() {
            effects.append(finish(removePending(at: index), .dropped, message: Self.droppedForBound))
        }
        return effects
    }

    /// The index of the oldest waiting item of the lowest priority. `pending` is kept in descending
    /// priority (`insert`), so those items are its last run: one pass back over it, no copies (a
    /// flood at the bound runs this for every post).
    private func oldestOfTheLowestPriority() -> Int? {
        guard let lowest = pending.last?.urgency.queuePriority else { return nil }
        var oldest = pending.count - 1
        var index = oldest
        while index > 0, pending[index - 1].urgency.queuePriority == lowest {
            index -= 1
            if pending[index].id < pending[oldest].id { oldest = index }
        }
        return oldest
    }

    /// Why an item dropped for the queue's bound ended (its `finished` message); the daemon logs it.
    public static let droppedForBound =
        "the waiting items reached the queue's memory bound (queue.max_bytes); the lowest-priority oldest was dropped"

    private mutating func insertPending(_ item: SpeechItem, at index: Int) {
        pending.insert(item, at: index)
        pendingBytes += item.queueCost
        if let priority = item.urgency.messagePriority { waitingByMessagePriority[priority, default: 0] += 1 }
    }

    private mutating func removePending(at index: Int) -> SpeechItem {
        let item = pending.remove(at: index)
        forgetPending(item)
        return item
    }

    private mutating func forgetPending(_ item: SpeechItem) {
        pendingBytes -= item.queueCost
        if let priority = item.urgency.messagePriority { waitingByMessagePriority[priority, default: 0] -= 1 }
    }

    // MARK: - Controls

    /// Returns whether the pause took effect (false when nothing was speaking).
    public mutating func pause(at boundary: PauseBoundary) -> (effective: Bool, effects: [Effect]) {
        pause(.all, at: boundary)
    }

    /// `.all` holds the whole queue (false when nothing was speaking, and then nothing is held).
    /// `.client` holds that client's items from now on, waiting or to come, and pauses the
    /// speaking item if it is theirs; the others' items go on. Returns whether anything of the
    /// client was speaking or waiting.
    public mutating func pause(_ scope: ControlScope, at boundary: PauseBoundary) -> (effective: Bool, effects: [Effect]) {
        switch scope {
        case .all:
            guard let current else { return (false, []) }
            if let effects = pauseCurrent(at: boundary) {
                isPaused = true
                return (true, effects)
            }
            // Already paused (or pausing) for its client alone: now the whole queue holds too.
            if !isPaused, current.phase == .paused || current.phase == .pausingAtWord {
                isPaused = true
                return (true, [])
            }
            return (false, [])
        case .client(let client):
            heldClients.insert(client)
            var effects: [Effect] = []
            if let current, current.item.owner == client, !isPaused,
                current.phase == .speaking || current.phase == .pausingAtWord
            {
                // Cut and parked at once if somebody else waits for the voice (`yieldVoiceIfHeld`);
                // else paused where it stands, to go on exactly there, until somebody does.
                effects = yieldVoiceIfHeld()
                if effects.isEmpty { effects = pauseCurrent(at: boundary) ?? [] }
            }
            let waiting = pending.contains { $0.owner == client }
            return (!effects.isEmpty || waiting, effects)
        }
    }

    /// An item paused by its own client's pause keeps the voice only while nobody else waits for
    /// it: once another's item could start, its audio is cut and the rest of it waits, held, to go
    /// on from its last word heard (`playbackEnded` parks it). One client's pause never silences
    /// the others.
    private mutating func yieldVoiceIfHeld() -> [Effect] {
        guard let current, !isPaused, isHeld(current.item), pending.contains(where: { !isHeld($0) }) else { return [] }
        switch current.phase {
        case .paused:
            self.current?.phase = .parking
            return [.cancelPlayback(current.item.id)]
        case .speaking, .pausingAtWord:
            // Its pause had not been heard yet: it is now, at once.
            self.current?.phase = .parking
            return [.cancelPlayback(current.item.id), emit(.paused(current.item.id), about: current.item)]
        case .stopping, .parking:
            return []
        }
    }

    /// Pauses the speaking item; nil when it is not speaking (already paused, pausing or stopping).
    private mutating func pauseCurrent(at boundary: PauseBoundary) -> [Effect]? {
        guard let current else { return nil }
        switch (current.phase, boundary) {
        case (.speaking, .immediate), (.pausingAtWord, .immediate):
            self.current?.phase = .paused
            return [.pausePlayback(current.item.id, .immediate), emit(.paused(current.item.id), about: current.item)]
        case (.speaking, .word):
            self.current?.phase = .pausingAtWord
            return [.pausePlayback(current.item.id, .word)]
        case (.pausingAtWord, .word), (.paused, _), (.stopping, _), (.parking, _):
            return nil
        }
    }

    /// The player reached the word boundary it was asked to pause at.
    public mutating func playbackPaused(_ id: UtteranceID) -> [Effect] {
        guard let current, current.item.id == id, current.phase == .pausingAtWord else { return [] }
        self.current?.phase = .paused
        return [emit(.paused(id), about: current.item)]
    }

    /// Returns whether there was anything to resume.
    public mutating func resume() -> (effective: Bool, effects: [Effect]) {
        resume(.all)
    }

    /// `.all` ends every pause, the queue's and each client's; `.client` ends that client's own.
    /// Returns whether there was such a pause.
    public mutating func resume(_ scope: ControlScope) -> (effective: Bool, effects: [Effect]) {
        switch scope {
        case .all:
            guard isPaused || !heldClients.isEmpty else { return (false, []) }
            isPaused = false
            heldClients.removeAll()
        case .client(let client):
            guard heldClients.remove(client) != nil else { return (false, []) }
            // Under a pause of everything, the client's speaking item stays paused.
            guard !isPaused else { return (true, []) }
        }
        guard let current, !isHeld(current.item) else { return (true, startNextIfIdle() + yieldVoiceIfHeld()) }
        switch current.phase {
        case .paused:
            self.current?.phase = .speaking
            return (true, [.resumePlayback(current.item.id), emit(.resumed(current.item.id), about: current.item)])
        case .pausingAtWord:
            // The pause had not been heard yet: cancel it quietly.
            self.current?.phase = .speaking
            return (true, [.resumePlayback(current.item.id)])
        case .speaking, .stopping, .parking:
            // A parking item goes on once its audio is cut: it waits unheld, and starts in turn.
            return (true, [])
        }
    }

    /// Ends the current item and every pending one with `reason` (`.stopped` for a client's stop).
    /// Returns whether anything was stopped.
    public mutating func stop(reason: FinishReason = .stopped) -> (effective: Bool, effects: [Effect]) {
        stop(.all, reason: reason)
    }

    /// Ends what is speaking and waiting in scope with `reason`. `.all` also ends every pause;
    /// a client's own pause outlives the cancel of its items (as in speech-dispatcher).
    public mutating func stop(_ scope: ControlScope, reason: FinishReason = .stopped) -> (effective: Bool, effects: [Effect]) {
        let inScope: (SpeechItem) -> Bool
        switch scope {
        case .all:
            inScope = { _ in true }
            isPaused = false
            heldClients.removeAll()
        case .client(let client):
            inScope = { $0.owner == client }
        }
        var effects = removePending(reason: reason, where: inScope)
        var effective = !effects.isEmpty
        if let current, inScope(current.item) {
            switch current.phase {
            case .stopping:
                // Already being cut: the reason it was cut for stands.
                break
            case .parking:
                // Already being cut: it now ends instead of waiting.
                self.current?.phase = .stopping(reason)
                effective = true
            case .speaking, .pausingAtWord, .paused:
                self.current?.phase = .stopping(reason)
                effects.append(.cancelPlayback(current.item.id))
                effective = true
            }
        }
        return (effective, effects)
    }

    /// The client has gone. Its own pause ends with it, and what that pause held ends, `stopped`:
    /// nothing waits on a client that can no longer resume. What it did not pause is still spoken
    /// (a client may leave right after queueing).
    public mutating func clientLeft(_ client: ClientID) -> [Effect] {
        guard heldClients.remove(client) != nil else { return [] }
        let owned = { (item: SpeechItem) in item.owner == client }
        var effects = removePending(reason: .stopped, message: Self.stoppedForLeaving, where: owned)
        if let current, owned(current.item) {
            switch current.phase {
            case .parking, .paused, .pausingAtWord:
                // Paused or parked by its client's pause (or held by a pause of everything as well):
                // it would wait for a client that can no longer resume it.
                self.current?.phase = .stopping(.stopped)
                if current.phase != .parking { effects.append(.cancelPlayback(current.item.id)) }
            case .speaking, .stopping:
                break
            }
        }
        return effects + startNextIfIdle()
    }

    private static let stoppedForLeaving = "its client left while its speech was paused"

    // MARK: - Player reports

    /// The player is done with `id`, for whatever reason. Starts the next item if nothing holds it.
    public mutating func playbackEnded(_ id: UtteranceID, _ outcome: PlaybackOutcome) -> [Effect] {
        guard let current, current.item.id == id else { return [] }
        self.current = nil
        if current.phase == .parking, outcome == .cancelled {
            park(current)
            return startNextIfIdle() + keepWithinBound()
        }
        let ending: Effect
        switch (outcome, current.phase) {
        case (.completed, _):
            // Even if it was being cut, it got to the end first; and it was heard, if no report
            // said so before its end.
            let told = current.toldStarted || !current.phase.isKept
                ? [] : [emit(current.item.isRemainder ? .resumed(id) : .started(id), about: current.item)]
            return told + [finish(current.item, .spoken)] + pausedQueueIfAny(current) + startNextIfIdle()
        case (.failed(let error), _):
            ending = finish(current.item, .error, message: error.message)
        case (.cancelled, .stopping(let reason)):
            ending = finish(current.item, reason)
        case (.cancelled, _):
            ending = finish(current.item, .error, message: "playback was cancelled unexpectedly")
        }
        return [ending] + pausedQueueIfAny(current) + startNextIfIdle()
    }

    /// An item that ended before reaching the word boundary its pause waited for: the pause now
    /// holds before the next item (of its client only, when only its client was paused). That is
    /// the queue's state, told after the item's last event.
    private func pausedQueueIfAny(_ current: Current) -> [Effect] {
        guard case .pausingAtWord = current.phase else { return [] }
        return [emit(.queuePaused, about: current.item)]
    }

    /// A word of the speaking item began to be heard: it is told, and remembered as where the item
    /// goes on from if its client pauses it. Nothing is told of an item being cut.
    public mutating func wordHeard(_ id: UtteranceID, start: Int, length: Int) -> [Effect] {
        guard let current, current.item.id == id, current.phase.isKept else { return [] }
        self.current?.lastWordStart = start
        return [emit(.word(id, start: start, length: length), about: current.item)]
    }

    /// An SSML mark of the speaking item was reached (its place in the audio was heard).
    public mutating func markHeard(_ id: UtteranceID, name: String) -> [Effect] {
        guard let current, current.item.id == id, current.phase.isKept else { return [] }
        return [emit(.mark(id, name: name), about: current.item)]
    }

    // MARK: - Helpers

    /// Puts what is left of an item its client paused back among the waiting items, at the head of
    /// its priority class, where it stood before it started; it is held while its client is
    /// paused, and is then subject to its priority's rules like any waiting item.
    private mutating func park(_ current: Current) {
        var rest = current.item
        // Told `resumed` when it goes on only if its clients were told it had started.
        rest.isRemainder = current.toldStarted || current.item.isRemainder
        if let start = current.lastWordStart {
            rest.utterance = rest.utterance.resuming(at: start)
            rest.playsEarcon = false
        }
        let priority = rest.urgency.queuePriority
        insertPending(rest, at: pending.firstIndex(where: { $0.urgency.queuePriority <= priority }) ?? pending.count)
    }

    private mutating func startNextIfIdle() -> [Effect] {
        guard current == nil, !isPaused, let index = pending.firstIndex(where: { !isHeld($0) }) else { return [] }
        let next = removePending(at: index)
        current = Current(item: next, phase: .speaking)
        return [.play(next)]
    }

    /// The speaking item's first sound was heard: it is told `started` (the rest of a parked item:
    /// `resumed`, for its clients that is a resume, not a new start), once, before its first word.
    public mutating func playbackAudible(_ id: UtteranceID) -> [Effect] {
        guard let current, current.item.id == id, current.phase.isKept, !current.toldStarted else { return [] }
        self.current?.toldStarted = true
        return [emit(current.item.isRemainder ? .resumed(id) : .started(id), about: current.item)]
    }

    /// Removes the waiting SSIP items of `priorities`; no pass at all when none waits.
    private mutating func removePending(reason: FinishReason, ifAnyOf priorities: Set<MessagePriority>) -> [Effect] {
        guard priorities.contains(where: { waitingByMessagePriority[$0, default: 0] > 0 }) else { return [] }
        return removePending(reason: reason) { $0.urgency.messagePriority.map(priorities.contains) ?? false }
    }

    private mutating func removePending(
        reason: FinishReason, message: String? = nil, where shouldRemove: (SpeechItem) -> Bool
    ) -> [Effect] {
        var effects: [Effect] = []
        var kept: Deque<SpeechItem> = []
        for item in pending {
            if shouldRemove(item) {
                effects.append(finish(item, reason, message: message))
                forgetPending(item)
            } else {
                kept.append(item)
            }
        }
        pending = kept
        return effects
    }

    private func finish(_ item: SpeechItem, _ reason: FinishReason, message: String? = nil) -> Effect {
        emit(.finished(item.id, text: item.text, reason: reason, message: message ?? reason.defaultMessage), about: item)
    }

    /// An event about `item`, told to its owner.
    private func emit(_ event: SpeechEvent, about item: SpeechItem) -> Effect {
        .emit(ClientEvent(event, owner: item.owner))
    }
}

extension FinishReason {
    /// A sentence clients can log or show, so that no `finished` arrives without a why.
    var defaultMessage: String? {
        switch self {
        case .spoken: nil
        case .interrupted: "interrupted by a newer item of the same or higher priority"
        case .flushed: "made moot by a screen change or a newer page scroll before it started"
        case .stopped: "stopped"
        case .dropped: "dropped before it started"
        case .error: "speech failed"
        }
    }
}
