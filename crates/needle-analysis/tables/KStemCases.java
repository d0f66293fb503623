import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.en.KStemFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

/**
 * Runs Lucene's KStemFilter on each line of standard input (one term, as a
 * keyword tokenizer makes it) and prints its stem, a line each, for
 * kstem_cases.py.
 */
public class KStemCases {
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    KeywordTokenizer tokenizer = new KeywordTokenizer();
    String line;
    while ((line = in.readLine()) != null) {
      tokenizer.setReader(new StringReader(line));
      try (TokenStream stream = new KStemFilter(tokenizer)) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        stream.reset();
        if (!stream.incrementToken()) throw new IllegalStateException("no token for " + line);
        out.println(term.toString());
        stream.end();
      }
    }
    out.flush();
  }
}
