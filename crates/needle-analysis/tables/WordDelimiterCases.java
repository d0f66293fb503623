import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.miscellaneous.WordDelimiterFilter;
import org.apache.lucene.analysis.miscellaneous.WordDelimiterGraphFilter;
import org.apache.lucene.analysis.miscellaneous.WordDelimiterIterator;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttribute;

/**
 * Runs Lucene's WordDelimiterGraphFilter (adjusting offsets, Lucene's
 * default character types) on each line of standard input: its flags, a tab,
 * the term as hex of its UTF-8, the term a keyword tokenizer's one token; or,
 * when a third field says "plain", the older WordDelimiterFilter.
 * Prints each part as hex of its UTF-8, its position, position length, start
 * and end offset (UTF-16 units), the parts joined by tabs, a line each, for
 * word_delimiter_cases.py.
 */
public class WordDelimiterCases {
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff)); return b.toString(); }
  static String unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return new String(b, StandardCharsets.UTF_8); }
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    KeywordTokenizer tokenizer = new KeywordTokenizer();
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      int flags = Integer.parseInt(parts[0]);
      tokenizer.setReader(new StringReader(unhex(parts[1])));
      StringBuilder row = new StringBuilder();
      TokenStream filter = parts.length > 2 && parts[2].equals("plain")
          ? new WordDelimiterFilter(tokenizer, WordDelimiterIterator.DEFAULT_WORD_DELIM_TABLE, flags, null)
          : new WordDelimiterGraphFilter(tokenizer, true, WordDelimiterIterator.DEFAULT_WORD_DELIM_TABLE, flags, null);
      try (TokenStream stream = filter) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        PositionIncrementAttribute inc = stream.addAttribute(PositionIncrementAttribute.class);
        PositionLengthAttribute len = stream.addAttribute(PositionLengthAttribute.class);
        OffsetAttribute off = stream.addAttribute(OffsetAttribute.class);
        stream.reset();
        int pos = -1;
        while (stream.incrementToken()) {
          pos += inc.getPositionIncrement();
          if (row.length() > 0) row.append('\t');
          row.append(hex(term.toString())).append(',').append(pos).append(',').append(len.getPositionLength())
              .append(',').append(off.startOffset()).append(',').append(off.endOffset());
        }
        stream.end();
      }
      out.println(row);
    }
    out.flush();
  }
}
