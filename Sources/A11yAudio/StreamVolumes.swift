// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// Keeps a11yd's two playback streams (`StreamPair`) at one volume and mute. A mixer shows each
/// stream, and the user sets the one that plays: the other is given the same, so that the next
/// interrupt is not heard at the old volume. (A stream opened later gets what the server remembers
/// for a11yd's streams.)
///
/// Touched only with the mainloop's lock held, as `PulseOutput` is: its methods are called there,
/// and libpulse's answers come on the mainloop thread, which holds it.
final class StreamVolumes {
    private var context: OpaquePointer?
    /// The volume and mute last seen on one of the streams, which the other was given.
    private var agreed: (volume: pa_volume_t, muted: Bool)?
    /// The server indices of a11yd's streams now, for the answers (which may come after one closed).
    private var own: [UInt32] = []
    /// Requests whose answer calls back into `self`: cancelled when the connection goes.
    private var asked: [OpaquePointer] = []

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func connected(_ context: OpaquePointer) {
        self.context = context
        agreed = nil
    }

    /// The connection is gone, or the output closing: no answer reaches `self` afterwards.
    func disconnect() {
        for operation in asked {
            pa_operation_cancel(operation)
            pa_operation_unref(operation)
        }
        asked = []
        context = nil
    }

    /// Sink input `index` changed; `own` are the indices of a11yd's streams now.
    func changed(_ index: UInt32, own: [UInt32]) {
        self.own = own
        guard own.count > 1, own.contains(index), let context else { return }
        asked.removeAll { operation in
            guard pa_operation_get_state(operation) != PA_OPERATION_RUNNING else { return false }
            pa_operation_unref(operation)
            return true
        }
        let operation = pa_context_get_sink_input_info(context, index, { _, info, eol, userdata in
            guard eol == 0, let info, let userdata else { return }
            Unmanaged<StreamVolumes>.fromOpaque(userdata).takeUnretainedValue().seen(info.pointee)
        }, userdata)
        if let operation { asked.append(operation) }
    }

    /// One of the streams is at `info`'s volume and mute: the others are given them, unless that is
    /// what they were given last (their own change, then, or one that did not touch the volume).
    private func seen(_ info: pa_sink_input_info) {
        guard let context, own.contains(info.index) else { return }
        var volume = info.volume
        let level = pa_cvolume_max(&volume), muted = info.mute != 0
        if let agreed, agreed.volume == level, agreed.muted == muted { return }
        agreed = (level, muted)
        for other in own where other != info.index {
            // One channel: the server spreads it over the stream's own.
            var same = pa_cvolume()
            pa_cvolume_set(&same, 1, level)
            if let operation = pa_context_set_sink_input_volume(context, other, &same, nil, nil) { pa_operation_unref(operation) }
            if let operation = pa_context_set_sink_input_mute(context, other, muted ? 1 : 0, nil, nil) { pa_operation_unref(operation) }
        }
    }
}
