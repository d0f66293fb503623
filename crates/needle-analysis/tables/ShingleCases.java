import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.shingle.ShingleFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttribute;
import org.apache.lucene.analysis.tokenattributes.TypeAttribute;

/**
 * Runs a whitespace tokenizer, a stop filter removing "x" and Lucene's
 * ShingleFilter on each line of standard input: min and max shingle size,
 * output unigrams (0/1), output unigrams if no shingles (0/1), the token
 * separator, the filler token and the text, each as hex of its UTF-8, split
 * by tabs. Prints the position after the text (the last token's position
 * plus the end's increment, plus one), then each token as hex of its UTF-8,
 * its position, position length, start and end offset and type, all split
 * by tabs, a line each, for shingle_cases.py.
 */
public class ShingleCases {
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff)); return b.toString(); }
  static String unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return new String(b, StandardCharsets.UTF_8); }
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    CharArraySet stop = new CharArraySet(java.util.List.of("x"), false);
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split("\t", -1);
      WhitespaceTokenizer tokenizer = new WhitespaceTokenizer();
      tokenizer.setReader(new StringReader(unhex(p[6])));
      ShingleFilter shingles = new ShingleFilter(new StopFilter(tokenizer, stop), Integer.parseInt(p[0]), Integer.parseInt(p[1]));
      shingles.setOutputUnigrams(p[2].equals("1"));
      shingles.setOutputUnigramsIfNoShingles(p[3].equals("1"));
      shingles.setTokenSeparator(unhex(p[4]));
      shingles.setFillerToken(unhex(p[5]));
      StringBuilder row = new StringBuilder();
      try (TokenStream stream = shingles) {
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
