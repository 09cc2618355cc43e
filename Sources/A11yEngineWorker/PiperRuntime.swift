// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Glibc
import SystemPackage

/// Where the Piper worker's program is: `piper/venv/bin/python3` and `piper/a11yd_piper_worker.py`
/// in the first a11yd data folder that has both (`make voices` installs them; docs/voices.md). The script
/// runs the package `a11yd_piper/` beside it (a runtime installed before it was a package has the whole
/// worker in the script, which runs as it is).
public struct PiperRuntime: Sendable, Equatable {
    /// `A11YD_PIPER_RUNTIME=DIR` names the folder that holds `venv/` and the worker script instead.
    public static let folderSwitch = "A11YD_PIPER_RUNTIME"

    public var python: FilePath
    public var script: FilePath

    /// The interpreter as the kernel executes it (the venv's `python3` is a symbolic link): what
    /// a11yd's Landlock rules must let it execute.
    public var executedFile: FilePath {
        SandboxedLauncher.realPath(python) ?? python
    }

    /// The interpreter a runtime installed while a11yd runs will execute: the one
    /// `a11yd-install-voices` makes its venv with, `/usr/bin/python3`, as the kernel executes it.
    /// a11yd lets itself execute it from the start, so that a reload takes such a runtime up
    /// (Landlock's rules cannot be widened afterwards). Nil where there is none.
    public static var installerInterpreter: FilePath? {
        SandboxedLauncher.realPath(FilePath("/usr/bin/python3"))
    }

    public static func find(environment: [String: String]) -> PiperRuntime? {
        let folders: [FilePath]
        if let folder = environment[folderSwitch], !folder.isEmpty {
            folders = [FilePath(folder)]
        } else {
            folders = PiperVoices.dataFolders(environment: environment).map { $0.appending("piper") }
        }
        for folder in folders {
            let runtime = PiperRuntime(python: folder.appending("venv/bin/python3"), script: folder.appending("a11yd_piper_worker.py"))
            if access(runtime.python.string, X_OK) == 0, access(runtime.script.string, R_OK) == 0 { return runtime }
        }
        return nil
    }

    /// How `WorkerEngine` starts it: one worker for every Piper voice, writing at `sampleRate`
    /// (eSpeak's, so that both engines play through one stream), loading `preload` before `ready`.
    /// Started through `launcher` (a11yd itself: `SandboxedLauncher`), which shuts the process in
    /// and then executes Python; nil starts Python directly, unprotected (tests of the worker alone).
    /// onnxruntime's threads for one inference: two where there are two cores or more (two came
    /// sooner than one for a short text and a long one alike, `engines/piper/measure_worker.py`). More threads than cores only wait for each other.
    static func synthesisThreads(cores: Int) -> Int { min(max(cores, 1), 2) }

    static var onlineCores: Int { Int(clamping: sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    public func launch(
        sampleRate: Int, voiceFolders: [FilePath], preload: String?, idleLimit: Duration?, environment: [String: String],
        launcher: String? = "/proc/self/exe"
    ) -> WorkerLaunch {
        var worker = [script.string, "--sample-rate", String(sampleRate), "--threads", String(Self.synthesisThreads(cores: Self.onlineCores))]
        for folder in voiceFolders { worker += ["--voices-dir", folder.string] }
        if let preload { worker += ["--preload", preload] }
        var arguments = worker
        if launcher != nil {
            // The venv (its site-packages, pyvenv.cfg), the script's folder (the script and its package
            // `a11yd_piper/`) and the voices: read-only.
            // `python` is `venv/bin/python3` in the runtime's folder (`find`): three folders up is that folder.
            let runtimeFolder = python.removingLastComponent().removingLastComponent().removingLastComponent()
            let readable = [runtimeFolder, script.removingLastComponent()] + voiceFolders
            arguments = ["--engine-worker", "--exec", python.string] + readable.flatMap { ["--read", $0.string] } + ["--"] + worker
        }
        // Python's own variables stay out (a PYTHONPATH from the user's shell would change what runs).
        let passed = environment.filter { ["HOME", "LANG", "LC_ALL"].contains($0.key) }
        return WorkerLaunch(
            engine: .piper, executable: launcher ?? python.string, arguments: arguments,
            environment: passed.merging(["PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"]) { _, new in new },
            // Python, onnxruntime and a 60 MB model: about a second here, more on a loaded machine.
            readyLimit: .seconds(30),
            // One clause is synthesised at once: a long one takes ~1 s on one thread.
            hangLimit: .seconds(5),
            idleLimit: idleLimit)
    }
}
