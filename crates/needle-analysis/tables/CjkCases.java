import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.cjk.CJKBigramFilter;
import org.apache.lucene.analysis.cjk.CJKWidthFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttribute;
import org.apache.lucene.analysis.tokenattributes.TypeAttribute;

/**
 * Runs a standard tokenizer, Lucene's CJKWidthFilter (when asked), a
 * lowercase filter and Lucene's CJKBigramFilter on each line of standard
 * input: whether to fold widths (0/1), the bigram filter's script flags (Han
 * 1, Hiragana 2, Katakana 4, Hangul 8), output unigrams (0/1) and the text as
 * hex of its UTF-8, split by tabs. Prints the position after the text, then
 * each token as hex of its UTF-8, its position, position length, start and
 * end offset and type, all split by tabs, a line each, for cjk_cases.py.
 */
public class CjkCases {
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff)); return b.toString(); }
  static String unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return new String(b, StandardCharsets.UTF_8); }
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split("\t", -1);
      StandardTokenizer tokenizer = new StandardTokenizer();
      tokenizer.setReader(new StringReader(unhex(p[3])));
      TokenStream chain = p[0].equals("1") ? new CJKWidthFilter(tokenizer) : tokenizer;
      chain = new CJKBigramFilter(new LowerCaseFilter(chain), Integer.parseInt(p[1]), p[2].equals("1"));
      StringBuilder row = new StringBuilder();
      try (TokenStream stream = chain) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        PositionIncrementAttribute inc = stream.addAttribute(PositionIncrementAttribute.class);
        PositionLengthAttribute len = stream.addAttribute(PositionLengthAttribute.class);
        OffsetAttribute off = stream.addAttribute(OffsetAttribute.class);
        TypeAttribute type = stream.addAttribute(TypeAttribute.class);
        stream.reset();
        int pos = -1;
        while (stream.incrementToken()) {
          pos += inc.getPositionIncrement();
          row.append('\t').append(hex(term.toString())).append(',').append(pos).append(',').append(len.getPositionLength())
              .append(',').append(off.startOffset()).append(',').append(off.endOffset()).append(',').append(type.type());
        }
        stream.end();
        out.println((pos + inc.getPositionIncrement() + 1) + row.toString());
      }
    }
    out.flush();
  }
}
