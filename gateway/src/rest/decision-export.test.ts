// The CSV fields of the decision export (decision-export.ts): RFC 4180 quoting, and OWASP's rule against CSV
// injection for text that a spreadsheet would take for a formula.
import { csvField } from './decision-export.ts';

describe('csvField', () => {
  test('quotes a field holding a comma, a quote or a line break, its quotes doubled', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('he said "hi"')).toBe('"he said ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
  });

  test.each([
    ['=HYPERLINK("https://evil.example","x")', `"'=HYPERLINK(""https://evil.example"",""x"")"`],
    ['+1+2', "'+1+2"],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
  ])('neutralises text that begins like a formula: %j', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  test('leaves text that only holds those characters later, and numbers, as they are', () => {
    expect(csvField('player=1')).toBe('player=1');
    expect(csvField('a-b@c')).toBe('a-b@c');
    expect(csvField(' =1')).toBe(' =1');
    expect(csvField(5)).toBe('5');
    expect(csvField(-5)).toBe('-5');
  });
});
