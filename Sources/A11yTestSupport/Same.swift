// SPDX-License-Identifier: GPL-3.0-or-later

/// Whether `a` equals `b`: `#expect(same(a, b))` asserts what `#expect(a == b)` does, and a failure
/// still shows the expression and both values. It is a function call to the expectation macro, which the
/// type checker solves at once; `#expect(a == b)` makes it weigh every `==` in scope against each of the
/// macro's comparison overloads, and that was most of the pure test modules' compile time (docs/testing.md).
public func same<T: Equatable>(_ a: T, _ b: T) -> Bool { a == b }
