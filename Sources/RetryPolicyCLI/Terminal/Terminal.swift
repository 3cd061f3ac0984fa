/// The process's terminal: whether there is one, raw mode, its width, reading and writing.
///
/// The C calls are in ``Platform``; this is what the REPL's driver uses.
enum Terminal {
  /// Whether standard input is a terminal.
  static var isInputInteractive: Bool { Platform.isTerminal(Platform.standardInput) }

  /// Whether standard output is a terminal.
  static var isOutputInteractive: Bool { Platform.isTerminal(Platform.standardOutput) }

  /// Puts the terminal in raw mode; returns false when standard input is no terminal.
  static func enableRawMode() -> Bool { Platform.enableRawMode() }

  /// Puts back the settings saved by ``enableRawMode()``.
  static func restore() { Platform.restoreTerminal() }

  /// The width in columns of the terminal a descriptor writes to, or 80 when it cannot be
  /// told.
  static func width(of descriptor: Int32) -> Int {
    Platform.terminalWidth(descriptor) ?? 80
  }

  /// What waiting for keys gives.
  enum Input: Equatable {
    /// Bytes typed.
    case bytes([UInt8])
    /// The window was resized: redraw.
    case resized
    /// The end of input, or an error reading it.
    case end
  }

  /// Waits for keys or a window resize (SIGWINCH, once ``Platform/watchWindowResizes()``
  /// has been called).
  static func readInput() -> Input {
    while true {
      if Platform.takeWindowResize() { return .resized }
      // A resize interrupts the wait; the timeout covers a signal that came just before it.
      guard Platform.waitForInput(Platform.standardInput, milliseconds: 250) else { continue }
      switch Platform.read(Platform.standardInput, capacity: 256) {
      case .bytes(let bytes): return .bytes(bytes)
      case .interrupted: continue
      case .end, .failure: return .end
      }
    }
  }
}
