// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// Carries out, against the speech API, the lines of one connection that need it: the actions its
/// `SSIPSession` returned for the line (on the event loop, `SSIPSessionHandler`), and those the
/// session returns when told how they went. Replies go to the router, then the session goes back.
struct SSIPConnection: Sendable {
    let client: ClientID
    let speech: any SpeechControl
    let router: SSIPRouter

    /// Handles one line. Returns false once the connection is to close (QUIT).
    func handle(_ command: SSIPCommand) async -> Bool {
        guard command.returnsSession else {
            // An answered STOP or CANCEL: its effect only (the session stayed on the event loop).
            for case .control(_, let scope, _) in command.actions { _ = await speech.stop(scope) }
            return true
        }
        var session = command.session
        await router.beginAnswer(client)
        var actions = command.actions
        var keepOpen = true
        var queuedMessage = false
        while !actions.isEmpty {
            let action = actions.removeFirst()
            let next: [SSIPSession.Action]
            switch action {
            case .reply(let reply):
                await router.send(reply, to: client)
                next = []
            case .speak(let request, let notifications):
                next = await speak(request, notifications: notifications, session: &session)
                queuedMessage = true
            case .control(let control, let scope, let reply):
                switch control {
                case .stop, .cancel: _ = await speech.stop(scope)
                // Immediate: silent within milliseconds, where speech-dispatcher waits for an index mark.
                case .pause: _ = await speech.pause(scope, at: .immediate)
                case .resume: _ = await speech.resume(scope)
                }
                if let reply { await router.send(reply, to: client) }
                next = []
            case .changeOthers(let change, let scope):
                let found = await router.change(change, for: scope, from: client)
                next = session.changedOthers(change, found: found)
            case .findSynthesisVoice(let name, let target):
                next = session.synthesisVoiceFound(name: name, among: await speech.voices(), target: target)
            case .listSynthesisVoices(let language, let variant):
                next = session.listed(await speech.voices(), language: language, variant: variant)
            case .listOutputModules:
                next = session.listedModules(await speech.voices())
            case .close:
                keepOpen = false
                next = []
            }
            actions = next + actions
        }
        await router.endAnswer(client, returning: session, queuedMessage: queuedMessage)
        return keepOpen
    }

    /// Prepares and queues a message; its events go to this client from the first one on.
    private func speak(
        _ request: SpeechRequest, notifications: SSIPNotifications, session: inout SSIPSession
    ) async -> [SSIPSession.Action] {
        let item: SpeechItem
        do {
            item = try await speech.prepare(request, for: client)
        } catch {
            return session.failed(SpeechError(wrapping: error))
        }
        guard await router.post(item, notifications: notifications) else {
            return session.failed(SpeechError(.shuttingDown, "a11yd is shutting down"))
        }
        return session.queued(item.id)
    }
}
