import Glibc

/// The terminal settings to put back, saved when raw mode starts; read by the signal handler.
///
/// Written only by `Terminal.enableRawMode` and `Terminal.restore`, both on the REPL's one
/// thread, before the handlers are installed and after; the handler only reads it.
nonisolated(unsafe) private var savedTerminalSettings: termios?

/// Puts the terminal back as it was, then dies of the signal as if no handler were installed.
private func restoreTerminalAndReraise(_ signalNumber: Int32) {
  if var settings = savedTerminalSettings {
    _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
  }
  signal(signalNumber, SIG_DFL)
  raise(signalNumber)
}

/// The process's terminal: whether there is one, raw mode, its width, reading and writing.
enum Terminal {
  /// The signals after which the terminal's settings are restored before the process ends.
  private static let restoredSignals: [Int32] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT]

  /// Whether standard input is a terminal.
  static var isInputInteractive: Bool { isatty(STDIN_FILENO) == 1 }

  /// Whether standard output is a terminal.
  static var isOutputInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

  /// Puts the terminal in raw mode; returns false when standard input is no terminal.
  ///
  /// Turns off line buffering, echo and the keys that send signals, so each key arrives as it
  /// is typed (Ctrl-C as byte 3).
  /// Output processing stays on, so `\n` still starts a new line. The old settings come back
  /// with ``restore()``, and also when the process is ended by SIGTERM, SIGHUP, SIGINT or
  /// SIGQUIT.
  static func enableRawMode() -> Bool {
    var original = termios()
    guard tcgetattr(STDIN_FILENO, &original) == 0 else { return false }
    var raw = original
    raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
    raw.c_cflag |= tcflag_t(CS8)
    raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
    withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
      bytes[Int(VMIN)] = 1
      bytes[Int(VTIME)] = 0
    }
    savedTerminalSettings = original
    for signalNumber in restoredSignals {
      signal(signalNumber) { restoreTerminalAndReraise($0) }
    }
    guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else {
      restore()
      return false
    }
    return true
  }

  /// Puts back the settings saved by ``enableRawMode()`` and the default signal handlers.
  static func restore() {
    guard var settings = savedTerminalSettings else { return }
    _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
    for signalNumber in restoredSignals {
      signal(signalNumber, SIG_DFL)
    }
    savedTerminalSettings = nil
  }

  /// The terminal's width in columns, or 80 when it cannot be told.
  static var width: Int {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
  }

  /// Reads what is available from standard input, waiting for at least one byte; an empty
  /// result means end of input or an error.
  static func readBytes() -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
      if count > 0 { return Array(buffer[0..<count]) }
      if count < 0, errno == EINTR { continue }
      return []
    }
  }

  /// Writes text to a file descriptor in full, retrying after interruptions.
  static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
    var bytes = Array(text.utf8)
    var start = 0
    while start < bytes.count {
      let written = bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return 0 }
        return Glibc.write(descriptor, base + start, buffer.count - start)
      }
      if written > 0 {
        start += written
      } else if written < 0, errno == EINTR {
        continue
      } else {
        return
      }
    }
  }
}
