import A11ySSIP
import ServiceLifecycle

/// A way in for clients (JSON Lines today; SSIP next): a service that owns its connections,
/// its framing and its routing of events, over the speech API.
public protocol FrontEnd: Service {
    /// Clients connected now (for idle exit).
    var connectionCount: Int { get async }
}

extension JSONLinesServer: FrontEnd {}
extension SSIPServer: FrontEnd {}
