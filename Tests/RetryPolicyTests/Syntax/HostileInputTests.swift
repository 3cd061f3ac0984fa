import Testing

@testable import RetryPolicy

/// Inputs built to be expensive: many diagnostics, on one line or in many policies.
///
/// Long lists too. What is checked is the behaviour (the cap, the rendering, the findings); the time
/// and memory they take are measured by the `hostile-input` benchmark.
@Suite("Hostile input")
struct HostileInputTests {
  @Test("past 100 errors, one note at the first left out says how many more there are")
  func errorsAreCapped() throws {
    let source = "policy p = retry 3" + String(repeating: " @", count: 250)
    let analysis = analyze(policyFile: source)
    let errors = analysis.diagnostics.filter { $0.severity == .error }
    #expect(errors.count == 100)
    #expect(errors.map(\.column) == (0..<100).map { 20 + 2 * $0 })
    #expect(analysis.omittedErrorCount == 150)
    #expect(analysis.omittedWarningCount == 0)
    #expect(analysis.hasErrors)
    let note = try #require(analysis.diagnostics.last)
    #expect(note.id == .diagnosticsOmitted)
    #expect(note.severity == .note)
    #expect("\(note.line):\(note.column)" == "1:220")
    #expect(note.message.hasPrefix("150 more errors not shown"))
    #expect(analysis.diagnostics.count == 101)
  }

  @Test("errors are never crowded out by warnings: each severity has its own 100")
  func warningsAreCappedApart() {
    var source = ""
    for index in 0..<130 { source += "policy p\(index) = retry 3 delay 0s\n" }
    source += "policy broken = retry 3 delay 1s jitter 200%\n"
    let analysis = analyze(policyFile: source)
    #expect(analysis.diagnostics.count { $0.severity == .warning } == 100)
    #expect(analysis.diagnostics.map(\.id).contains(.jitterOutOfRange))
    #expect(analysis.omittedWarningCount == 30)
    #expect(analysis.omittedErrorCount == 0)
    #expect(analysis.diagnostics.last?.message.hasPrefix("30 more warnings not shown") == true)
    #expect(analysis.diagnostics.last?.line == 101)
  }

  @Test("compile throws the capped diagnostics, the note last")
  func compileIsCapped() {
    let source = "retry 3" + String(repeating: " @", count: 120)
    #expect {
      try compile(policy: source)
    } throws: { error in
      guard let error = error as? PolicyCompileError else { return false }
      return error.errors.count == 100 && error.diagnostics.last?.id == .diagnosticsOmitted
    }
  }

  @Test("many diagnostics on one long line each get the marker under their own character")
  func manyDiagnosticsOnOneLine() {
    // `@` at every other column of a 4,000-column line, and a wide character before them.
    let source = "policy p = retry 3 on 東京" + String(repeating: " @", count: 2000)
    let analysis = analyze(policyFile: source)
    let renderer = DiagnosticRenderer(source: source, sourceName: "f.retry")
    var checked = 0
    for diagnostic in analysis.diagnostics where diagnostic.id == .unexpectedCharacter {
      let lines = renderer.render(diagnostic).split(
        separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.count == 4)
      let shown = Array(lines[1])
      let marker = lines[2].count - 1
      #expect(lines[2].hasSuffix("^"))
      // Count cells: the two CJK characters take two cells each.
      var cells = 0
      var characterUnderMarker: Character?
      for character in shown {
        let width = character == "東" || character == "京" ? 2 : 1
        if cells == marker { characterUnderMarker = character }
        cells += width
      }
      let expected: Character = diagnostic.message.contains("'@'") ? "@" : "東"
      #expect(characterUnderMarker == expected, "\(diagnostic.line):\(diagnostic.column)")
      #expect(shown.count <= DiagnosticRenderer.maximumShownColumns + 2)
      checked += 1
    }
    #expect(checked == 100)
    // Rendering all of them at once gives the same text as one at a time.
    let each = analysis.diagnostics.map { renderer.render($0) }.joined()
    #expect(renderer.render(analysis.diagnostics) == each)
  }

  @Test("long 'on' and 'except' lists still report each class in both, at the right places")
  func longLists() throws {
    let included = (0..<5000).map { "a\($0)" }
    let excluded = (0..<5000).map { "b\($0)" } + ["a17", "a4000", "a17"]
    let source =
      "retry 3 on " + included.joined(separator: ", ") + ", a17 except "
      + excluded.joined(separator: ", ")
    let analysis = analyze(policy: source)
    let found = analysis.diagnostics.filter { $0.id == .classInOnAndExcept }
    #expect(found.count == 3)
    #expect(found.map(\.message).allSatisfy { $0.contains("'a17'") || $0.contains("'a4000'") })
    // Each note points at the first 'on' place of its class, not at a later repeat.
    let firstA17 = try #require(source.range(of: "a17,"))
    let columnOfA17 = source.distance(from: source.startIndex, to: firstA17.lowerBound) + 1
    let noteColumns = found.compactMap { $0.notes.first?.column }
    #expect(noteColumns.filter { $0 == columnOfA17 }.count == 2)
  }
}
