// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// What a11yd's connection and playback stream say they are, as libpulse properties: the name and
/// icon a mixer (pavucontrol, GNOME's settings) shows, and `media.role = "a11y"`, PulseAudio's
/// role for accessibility, which role-based ducking and routing in sound servers act on.
public struct PlaybackIdentity: Sendable, Equatable {
    public var applicationName: String
    /// Reverse-DNS, as desktop files name applications.
    public var applicationID: String
    /// A freedesktop icon name.
    public var iconName: String
    /// `media.role` of the stream.
    public var role: String

    public init(
        applicationName: String = "a11yd", applicationID: String = "org.a11yd",
        iconName: String = "preferences-desktop-accessibility", role: String = "a11y"
    ) {
        self.applicationName = applicationName
        self.applicationID = applicationID
        self.iconName = iconName
        self.role = role
    }

    /// The properties of the connection (the client): the application and its role, and `extra`.
    func withContextProperties<R>(adding extra: [(String, String)] = [], _ body: (OpaquePointer?) -> R) -> R {
        withProperties([
            (PA_PROP_APPLICATION_NAME, applicationName), (PA_PROP_APPLICATION_ID, applicationID),
            (PA_PROP_APPLICATION_ICON_NAME, iconName), (PA_PROP_MEDIA_ROLE, role),
        ] + extra, body)
    }

    /// The properties of one playback stream: what it plays and its role (with the application's
    /// name and icon, which some mixers read from the stream itself).
    func withStreamProperties<R>(_ body: (OpaquePointer?) -> R) -> R {
        withProperties([
            (PA_PROP_MEDIA_ROLE, role), (PA_PROP_MEDIA_NAME, "speech"),
            (PA_PROP_APPLICATION_NAME, applicationName), (PA_PROP_APPLICATION_ID, applicationID),
            (PA_PROP_APPLICATION_ICON_NAME, iconName), (PA_PROP_MEDIA_ICON_NAME, iconName),
        ], body)
    }

    /// A `pa_proplist` holding `entries`, alive for `body` only; `nil` if libpulse cannot make one
    /// (then the stream or context is made without properties, as before).
    private func withProperties<R>(_ entries: [(String, String)], _ body: (OpaquePointer?) -> R) -> R {
        guard let list = pa_proplist_new() else { return body(nil) }
        defer { pa_proplist_free(list) }
        // pa_proplist_sets refuses invalid keys or values that are not UTF-8: that property is left out.
        for (key, value) in entries { _ = pa_proplist_sets(list, key, value) }
        return body(list)
    }
}
