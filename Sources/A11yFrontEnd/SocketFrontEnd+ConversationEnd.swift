import NIOCore

extension NIOAsyncChannelOutboundWriter {
    /// Ends a11yd's side of a conversation whose writer has nothing more to send (the client quit,
    /// was too slow, or a11yd is stopping): what is queued is still written and then EOF, and the
    /// connection stops reading too. Waiting for the client's own EOF instead let a client that
    /// stays connected and silent (Orca while a11yd stops) hold the connection until the service
    /// group cut it after its grace period, and a cut SSIP front end made a11yd exit 1.
    public func finishConversation(on channel: any Channel) {
        finish()
        channel.close(mode: .input, promise: nil)
    }
}
