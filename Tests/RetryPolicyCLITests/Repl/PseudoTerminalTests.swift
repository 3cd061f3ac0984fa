#if os(Linux)
  import Foundation
  import Testing

  @testable import RetryPolicyCLI

  /// The built binary's REPL on a pseudo-terminal: raw mode, the line editor, window resizes.
  ///
  /// Waits are for the tool's own output (poll on the terminal's master side, bounded), never
  /// fixed sleeps.
  @Suite(
    "REPL on a terminal, end to end",
    .enabled(if: FileManager.default.fileExists(atPath: "/dev/ptmx")))
  struct ReplTerminalTests {
    /// A pseudo-terminal with the built tool's REPL running on its other side.
    final class Session {
      let master: Int32
      let process = Process()
      let home: URL
      private(set) var transcript = ""
      /// `TIOCSPTLCK` and `TIOCGPTN` (macros Swift does not import).
      static let unlockRequest: UInt = 0x4004_5431
      static let numberRequest: UInt = 0x8004_5430

      init(columns: UInt16) throws {
        // Linux's pseudo-terminal multiplexer: unlock the new terminal, ask its number.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: Int32 = 0
        guard master >= 0, ioctl(master, Self.unlockRequest, &unlock) == 0,
          ioctl(master, Self.numberRequest, &number) == 0
        else { throw CocoaError(.fileNoSuchFile) }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw CocoaError(.fileNoSuchFile) }
        home = try ToolRunner.makeFolder([:])
        resize(columns: columns)
        let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.executableURL = try ToolRunner.binary()
        process.arguments = ["repl"]
        process.environment = [
          "TERM": "dumb", "HOME": home.path,
          "RETRY_POLICY_HISTORY": home.appendingPathComponent("history").path,
        ]
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
      }

      deinit {
        if process.isRunning { process.terminate() }
        close(master)
        try? FileManager.default.removeItem(at: home)
      }

      /// The tool's exit status, waiting at most five seconds (then it is stopped: nil).
      func waitForExit() -> Int32? {
        let deadline = Date().addingTimeInterval(5)
        // Reading keeps the terminal's buffer from filling up and blocking the tool.
        while process.isRunning, Date() < deadline {
          // The end of the terminal's output: the tool has closed it, so it is exiting.
          if !readOnce(milliseconds: 20) {
            process.waitUntilExit()
            break
          }
        }
        guard !process.isRunning else {
          process.terminate()
          return nil
        }
        return process.terminationStatus
      }

      /// Waits up to `milliseconds` for output and reads what there is; false at the end of it
      /// (the tool has closed the terminal).
      private func readOnce(milliseconds: Int32) -> Bool {
        var request = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, milliseconds) > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        transcript += String(decoding: buffer[0..<count], as: UTF8.self)
        return true
      }

      /// Sets the terminal's size, as a window resize does.
      func resize(columns: UInt16) {
        var size = winsize(ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
      }

      /// Types text.
      func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
      }

      /// Reads what the tool writes until `done` holds for what came since `start`, for at
      /// most five seconds; returns that text.
      @discardableResult
      func readOutput(from start: String.Index? = nil, until done: (String) -> Bool) -> String {
        let from = start ?? transcript.endIndex
        let offset = transcript.distance(from: transcript.startIndex, to: from)
        let deadline = Date().addingTimeInterval(5)
        while !done(String(transcript.dropFirst(offset))), Date() < deadline,
          readOnce(milliseconds: 100)
        {}
        return String(transcript.dropFirst(offset))
      }
    }

    @Test("a window resize redraws the line for the new width, then Ctrl-D leaves with 0")
    func resizeRedraws() throws {
      let session = try Session(columns: 90)
      session.readOutput { $0.contains("retry> ") }
      let line = "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s within 2m"
      session.type(line)
      session.readOutput { $0.contains("within 2m") }
      session.resize(columns: 35)
      kill(session.process.processIdentifier, SIGWINCH)
      // The cursor was 76 columns in: the narrower terminal re-wrapped it 2 rows down. Back up
      // there, clear, and draw the line's end that fits in 35 - 7 - 1 columns.
      let redraw = session.readOutput { $0.contains("\u{1B}[K") }
      #expect(redraw.hasPrefix("\u{1B}[2A\r\u{1B}[J\rretry> "))
      #expect(redraw.contains("retry> itter 10% max 30s within 2m\u{1B}[K"))
      // Ctrl-U empties the line, Ctrl-D on an empty line leaves.
      session.type("\u{15}\u{4}")
      #expect(session.waitForExit() == 0)
    }
  }
#endif
